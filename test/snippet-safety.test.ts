// Snippets read the program's values without running its code (no getter,
// Proxy trap, valueOf/toString/Symbol.toPrimitive, nor a built-in the program
// replaced), and counters may have any identifier as name, non-ASCII included.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { resolveNames } from '../src/agent/runtime';
import { Session } from '../src/api';
import { compileSnippet } from '../src/instrument/snippet';
import { FIXTURES, programOutput } from './support/helpers';

async function launched(file: string, probes: string[]) {
  const s = await Session.launch([process.execPath, path.join(FIXTURES, file)], probes, { stdio: 'pipe', cwd: FIXTURES });
  after(() => { s.child!.kill(); });
  const { until, send } = programOutput(s.child!);
  await until(/ready/);
  return { s, send, until };
}

test('snippet reads run no program code: getters and proxies read as undefined, objects never coerced, data read exactly', async () => {
  const at = '/Code/getters.js/handle.entry';
  const { s, send } = await launched('getters.js', [
    `${at}: if ($arg[0].body.length === undefined) hidden++`,
    `${at}: if ($arg[0].own === undefined) hiddenOwn++`,
    `${at}: if ($arg[0].prox.x === undefined && $arg[1].x === undefined && $arg[0].behind.x === undefined) proxied++`,
    `${at}: if ($arg[0].num > 10) big++`,
    `${at}: if ($arg[0].num == 50 || $arg[0].num == "50") eq++`,
    `${at}: if (-$arg[0].num < 0 || $arg[0].num + 1 > 0) arith++`,
    `${at}: if ($arg[0].num) truthy++`,
    `${at}: if ($arg[0].num === $arg[0].num) same++`,
    `${at}: if ($arg[0].plain[$arg[0].num] === undefined) keyNotCoerced++`,
    `${at}: plain += $arg[0].plain.length`,
    `${at}: inherited += $arg[0].inherited`,
    `${at}: chars += $arg[0].name.length`,
    `${at}: if ($arg[0].name[1] === "b") bs++`,
    `${at}: bytes += $arg[0].buf.length`,
    `${at}: sizes += $arg[0].map.size`,
    `${at}: idx += $arg[0].i`,
  ]);
  const n = 200;
  const done = new Promise<string>((resolve) => {
    let out = '';
    s.child!.stdout!.on('data', (d: string) => { out += d; const m = /done .*\n/.exec(out); if (m) resolve(m[0].trim()); });
  });
  send(String(n));
  // the program's own counters are what they are without paranode: one getter read per call, nothing else
  assert.equal(await done, `done ${4 * n} reads=${n} traps=0 coerced=0 gopd=0`);
  await s.sample();
  assert.equal(s.value('hidden'), n);
  assert.equal(s.value('hiddenOwn'), n);
  assert.equal(s.value('proxied'), n);
  assert.equal(s.value('big') ?? 0, 0);
  assert.equal(s.value('eq') ?? 0, 0);
  assert.equal(s.value('arith') ?? 0, 0);
  assert.equal(s.value('truthy'), n);
  assert.equal(s.value('same'), n);
  assert.equal(s.value('keyNotCoerced'), n);
  assert.equal(s.value('plain'), 7 * n);
  assert.equal(s.value('inherited'), 5 * n);
  assert.equal(s.value('chars'), 4 * n);
  assert.equal(s.value('bs'), n);
  assert.equal(s.value('bytes'), 11 * n);
  assert.equal(s.value('sizes'), 2 * n);
  assert.equal(s.value('idx'), (n * (n - 1)) / 2);
  await s.detach();
});

test('non-ASCII counter and timer names count exactly (and do not break the other snippets at the point)', async () => {
  const { s, send, until } = await launched('counted.js', [
    '/Code/counted.js/f.entry: zähler++',
    '/Code/counted.js/f.entry: 計数 += 2',
    '/Code/counted.js/f.entry: if ($arg[0] > 10) größer++',
    '/Code/counted.js/*.entry: ämter$fn++',
    '/Code/counted.js/f.entry: startWallTimer(zeitÜ)',
    '/Code/counted.js/f.exit: stopTimer(zeitÜ)',
    '/Code/counted.js/f.entry: n++',
  ]);
  send('777');
  await until(/done/);
  await s.sample();
  assert.equal(s.value('zähler'), 777);
  assert.equal(s.value('計数'), 2 * 777);
  assert.equal(s.value('größer'), 777 - 5);
  assert.equal(s.value('ämter@/Code/counted.js/f'), 777);
  assert.equal(s.value('ämter@/Code/counted.js/caller'), 1);
  assert.ok((s.value('zeitÜ') ?? -1) >= 0);
  assert.equal(s.value('n'), 777);
  await s.detach();
});

test('the runtime resolves every counter and timer name whole, whatever it holds', () => {
  const c = compileSnippet('startWallTimer(x__c_y); a__t_b++; if ($arg[0] === "__c_s") größe$fn += 1', { point: 'entry' });
  const counters: string[] = [], timers: string[] = [];
  const body = resolveNames(c.body, (n) => counters.push(n) - 1, (n) => timers.push(n) - 1);
  assert.deepEqual(counters, ['a__t_b', 'größe$fn']);
  assert.deepEqual(timers, ['x__c_y']);
  assert.deepEqual([...c.counters].sort(), ['a__t_b', 'größe$fn']);
  // the string constant is left as it is
  assert.match(body, /"\\u005f\\u005fc\\u005fs"/);
});
