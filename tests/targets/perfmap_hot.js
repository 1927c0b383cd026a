// A hot JavaScript function for e2e-perfmap: node --perf-basic-prof writes /tmp/perf-PID.map,
// perch names the JIT-compiled perchHotLoop from it. Usage: node perfmap_hot.js [SECONDS]
'use strict';

function perchHotLoop(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x * 31 + i) % 1000003;
	return x;
}

const secs = Number(process.argv[2] || 3);
let sum = 0;
// warm up so the function is compiled (and named in the map) before perch attaches
for (let i = 0; i < 200; i++)
	sum += perchHotLoop(10000);
process.stdout.write('ready ' + process.pid + '\n');
const end = Date.now() + secs * 1000;
while (Date.now() < end)
	sum += perchHotLoop(100000);
process.exit(sum === -1 ? 1 : 0);
