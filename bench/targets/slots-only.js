// Diagnostic preload for the workload benchmark (not a paranode feature):
// `node -r ./slots-only.js work.js ...` installs paranode's in-target runtime
// and its load hook from dist/, so every module loaded afterwards is prepared
// with slots exactly as under Session.launch, but without the agent, its relay
// thread and the inspector session (Debugger.enable). It tells apart the cost of
// the slots from the cost of the rest.
'use strict';
const path = require('path');
const dist = path.resolve(__dirname, '..', '..', 'dist', 'src', 'agent');
const { install } = require(path.join(dist, 'runtime.js'));
const { installLoadHooks } = require(path.join(dist, 'hooks.js'));
const rt = install();
rt.activate();
installLoadHooks(rt);
