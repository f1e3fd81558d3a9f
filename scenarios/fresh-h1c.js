// fresh-h1c: every request on a brand-new connection — cleartext HTTP/1.1: TCP connect, one
// request.
// REQUESTS iterations shared by FRESH_CONNECTIONS VUs, keep-alive off (noConnectionReuse,
// noVUConnectionReuse). It is proved, not assumed: a request counts in new_connections only if
// k6 timed a TCP connect for it, and the run is valid only if
// new_connections == requests. rps = requests / (first request start → last response end).
import http from 'k6/http';
import { rootScenario } from './lib/scenario.js';

const s = rootScenario({ scenario: 'fresh-h1c', client: http });

export const options = s.options;
export const setup = s.setup;
export const handleSummary = s.handleSummary;

export default function () {
  s.iteration();
}
