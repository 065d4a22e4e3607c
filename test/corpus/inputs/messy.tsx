import {readFileSync} from 'fs'
export   interface Shape{ kind:'circle'|'square'; size:number; label?:string }
export type Area<T extends Shape=Shape>=T extends {kind:'circle'}?number:number
enum Color{Red='red',Green='green',Blue="blue"}
export abstract class Base<T>{ protected constructor(private readonly items:T[]=[]){} abstract area(s:T):number
  total():number{return this.items.reduce((a,s)=>a+this.area(s),0)} }
export class Shapes extends Base<Shape>{ constructor(items:Shape[]){super(items)}
  area(s:Shape):number{ switch(s.kind){case 'circle':return Math.PI*s.size**2;case 'square':return s.size*s.size} } }
function assertNever(x:never):never{throw new Error('unexpected '+x)}
export const load=(file:string):Shape[]=>JSON.parse(readFileSync(file,'utf8')) as Shape[]
declare global{ interface Window{ shapes?:Shapes } }
export function pick<T,K extends keyof T>(o:T,...keys:K[]):Pick<T,K>{const r={} as Pick<T,K>;for(const k of keys)r[k]=o[k];return r}
const c:Color=Color.Green; let n=('3' as unknown) as number; let m=n! ; const sat={a:1} satisfies Record<string,number>
export default function Component({title,items}:{title:string;items:string[]}){return <ul className="list" data-n={items.length}>{items.map((i,k)=><li key={k}>{title}: {i}</li>)}<></></ul>}
namespace Geometry{ export const unit=1; export function twice(x:number){return x*2*unit} }
export {Geometry,Color,c,m,sat,assertNever}
