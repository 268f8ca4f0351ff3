// express-rate-limit in front of one route answering 200 "ok", for headroom's
// acceptance suite (acceptance/servers_express.go starts it).
//
//   node server.js --window-ms 1000 --limit 5 --standard-headers draft-7 --legacy-headers false [--port 0]
//
// It listens on 127.0.0.1 (port 0: one the kernel picks) and then prints
// "listening <port>" on stdout. The limiter runs with its defaults but for
// windowMs, limit, standardHeaders and legacyHeaders: the MemoryStore, keys
// by client address, its own 429 status and body.

import process from 'node:process';
import { parseArgs } from 'node:util';
import express from 'express';
import { rateLimit } from 'express-rate-limit';

function fail(message) {
	console.error(`server.js: ${message}`);
	process.exit(2);
}

let values;
try {
	({ values } = parseArgs({
		options: {
			port: { type: 'string', default: '0' },
			'window-ms': { type: 'string' },
			limit: { type: 'string' },
			'standard-headers': { type: 'string', default: 'false' },
			'legacy-headers': { type: 'string', default: 'false' },
		},
		strict: true,
	}));
} catch (error) {
	fail(`${error.message}; usage: node server.js --window-ms MS --limit N [--standard-headers draft-6|draft-7|draft-8|false] [--legacy-headers true|false] [--port PORT]`);
}

function wholeNumber(name, least, most) {
	const text = values[name];
	if (text === undefined) fail(`--${name} is missing; want a whole number from ${least} to ${most}`);
	if (!/^[0-9]+$/.test(text) || Number(text) < least || Number(text) > most) {
		fail(`--${name} is ${JSON.stringify(text)}; want a whole number from ${least} to ${most}`);
	}
	return Number(text);
}

const port = wholeNumber('port', 0, 65535);
// setInterval, which the MemoryStore's sweep uses, takes at most 2^31-1 ms.
const windowMs = wholeNumber('window-ms', 1, 2 ** 31 - 1);
const limit = wholeNumber('limit', 1, Number.MAX_SAFE_INTEGER);

const drafts = ['draft-6', 'draft-7', 'draft-8'];
let standardHeaders = values['standard-headers'];
if (standardHeaders === 'false') standardHeaders = false;
else if (!drafts.includes(standardHeaders)) {
	fail(`--standard-headers is ${JSON.stringify(standardHeaders)}; want one of ${drafts.join(', ')} or false`);
}
const legacy = values['legacy-headers'];
if (legacy !== 'true' && legacy !== 'false') {
	fail(`--legacy-headers is ${JSON.stringify(legacy)}; want true or false`);
}

const app = express();
app.disable('x-powered-by');
app.use(rateLimit({ windowMs, limit, standardHeaders, legacyHeaders: legacy === 'true' }));
app.use((request, response) => {
	response.type('text/plain').send('ok\n');
});

const server = app.listen(port, '127.0.0.1', (error) => {
	if (error) {
		console.error(`server.js: cannot listen on 127.0.0.1:${port}: ${error.message}`);
		process.exit(1);
	}
	console.log(`listening ${server.address().port}`);
});
