// Demo: an async program that waits on I/O. A client loads user profiles one
// by one from a slow HTTP service (in this process, answering after 40 ms):
// main -> loadUsers -> loadUser -> fetchProfile, which awaits the network.
// Runs for argv[2] seconds (default 20).
'use strict';
const http = require('http');

const server = http.createServer((req, res) => {
  setTimeout(() => res.end(JSON.stringify({ id: req.url.slice(1), name: 'user' + req.url.slice(1) })), 40);
});

function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

// the planted bottleneck: every profile waits for the slow service
async function fetchProfile(port, id) {
  const body = await get(port, `/${id}`);
  return JSON.parse(body);
}

async function loadUser(port, id) {
  const profile = await fetchProfile(port, id);
  return { ...profile, loaded: true };
}

async function loadUsers(port, ids) {
  const out = [];
  for (const id of ids) out.push(await loadUser(port, id));
  return out;
}

async function main() {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const until = Date.now() + 1000 * Number(process.argv[2] || 20);
  let n = 0;
  while (Date.now() < until) n += (await loadUsers(port, [1, 2, 3, 4, 5])).length;
  server.close();
  console.log('loaded', n > 0 ? 'users' : 'nothing');
}

main();
