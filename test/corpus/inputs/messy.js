// A deliberately badly formatted module (input of prettier-format.js and sucrase-transpile.js)
const   fs=require('fs'),path = require( "path" )
function  parseArgs( argv ){ let out={_:[]};for(let i=0;i<argv.length;i++){const a=argv[i];if(a.startsWith('--')){const [k,v]=a.slice(2).split('=');out[k]=v===undefined?true:v}else out._.push(a)}return out}
class   Queue{ #items=[];  static #count=0
  static { Queue.#count = 0 }
  get size(){return this.#items.length}  push(...xs){ Queue.#count+=xs.length;this.#items.push(...xs);return this}
  shift(){return this.#items.shift()} static get total(){return Queue.#count}
  *[Symbol.iterator](){ yield* this.#items } }
const compose=(...fns)=>x=>fns.reduceRight((v,f)=>f(v),x),inc=x=>x+1,dbl=x=>x*2
async function* ticker(n){for(let i=0;i<n;i++){await null;yield i}}
async function main(){ const q=new Queue().push(1,2,3); for await(const t of ticker(3)) q.push(t*10)
  const r = [...q].map(compose(inc,dbl)).filter(x=>x%3!==0).reduce((a,b)=>a+b,0)
  const obj={a:1,'b-c':2,[`k${r}`]:3,nested:{deep:{deeper:{deepest:[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]}}},fn(){return this.a},get g(){return 1},set g(v){}}
  label: for(const x of [1,2,3]){ switch(x){case 1: continue label; case 2:{ break } default: break label} }
  try{ JSON.parse('{') }catch{ } finally { }
  const s=`template ${ r>10 ? 'big' : "small" } ${obj?.nested?.deep ?? 'none'}`
  return {r,s,size:q.size,total:Queue.total,args:parseArgs(['--a=1','b','--c']),e:2**10,o:obj.a??=5,big:123n*2n}
}
module.exports={main,parseArgs,Queue, compose}
if(require.main===module)main().then(v=>console.log(JSON.stringify(v,(k,x)=>typeof x==='bigint'?String(x):x)),e=>{console.error(e);process.exitCode=1})
