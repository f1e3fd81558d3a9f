// A short human summary of one result (k6's own end-of-test summary is replaced by
// handleSummary; its data is kept whole in the result JSON under "k6").

function num(x, digits = 0) {
  if (x === null || x === undefined) return '–';
  // no Intl in k6's JS runtime: group thousands by hand
  const [int, frac] = x.toFixed(digits).split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac ? `${grouped}.${frac}` : grouped;
}

function ms(x) {
  return x === null || x === undefined ? '–' : x.toFixed(x < 10 ? 3 : 1);
}

function statsLine(label, s) {
  if (!s) return `  ${label.padEnd(22)} –`;
  return (
    `  ${label.padEnd(22)} avg ${ms(s.avg)}  p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  ` +
    `p95 ${ms(s.p95)}  p99 ${ms(s.p99)}  min ${ms(s.min)}  max ${ms(s.max)}`
  );
}

function shape(r) {
  const c = r.config;
  if (r.mode === 'reused') {
    return c.streams ? `${c.connections} connections × ${c.streams} streams` : `${c.connections} connections`;
  }
  if (r.mode === 'equal-load') {
    const [pre, most] = c.vus;
    if (r.client === 'native') {
      // lib/equalload.js openModel: over h2, as many streams as are due, up to the server's limit
      return `${c.rate} req/s offered (open model: each request sent when due), ${most} connections`;
    }
    const pool = c.streams ? `${pre} to ${most} connections × ${c.streams} streams` : `${pre} to ${most} VUs`;
    return `${c.rate} req/s offered (constant arrival rate), ${pool}`;
  }
  if (r.mode === 'idle') {
    const i = r.idle;
    return `${num(i.connections)} connections held idle, ${i.trickle_rate} req/s over ${i.trickle_connections} of them`;
  }
  if (r.mode === 'fresh') {
    const n = c.fresh_duration ? `at least ${num(c.requests)} requests and ${c.fresh_duration}` : `${num(c.requests)} requests`;
    return `${n}, ${c.fresh_connections} at a time, each on a new connection`;
  }
  return `${c.samples} sample${c.samples === 1 ? '' : 's'}${c.upload_bytes ? ` of ${num(c.upload_bytes)} bytes` : ''}, 1 VU`;
}

export function formatText(r, out) {
  const protos = Object.entries(r.protos_seen)
    .map(([p, n]) => `${p} ${num(n)}`)
    .join(', ');
  const lines = [
    '',
    `proxybench ${r.scenario} → ${r.target}  (${r.proto}, expect ${r.expected_proto}; ${r.url})`,
    `  testid ${r.testid}  profile ${r.profile}  mode ${r.mode}: ${shape(r)}`,
    `  measured ${r.duration_s === null ? '–' : `${num(r.duration_s, 2)} s`}` +
      `  requests ${num(r.requests)}` +
      (r.late_requests ? ` (${num(r.late_requests)} completed after it, not in rps)` : '') +
      (r.rps !== null ? `  rps ${num(r.rps, 1)}` : '') +
      `  failed ${num(r.failed_requests)}  checks ${num(r.checks.passes)}/${num(r.checks.passes + r.checks.fails)}`,
    `  protocols ${protos || '–'}` +
      (r.new_connections !== undefined ? `  new connections ${num(r.new_connections)}` : '') +
      `  dropped iterations ${num(r.dropped_iterations)}`,
    statsLine('latency ms', r.latency_ms),
    statsLine('ttfb ms', r.ttfb_ms),
  ];
  for (const [k, s] of Object.entries(r.extra)) {
    lines.push(statsLine(`${k} ms`, s));
  }
  // the verdict is Go's (package verdict), drawn from the counts this result carries and what the
  // runner reads beside the run (the upstream's answers): make k6 prints it; by hand, proxybench table
  const failed = r.counts.failed_thresholds;
  lines.push(failed.length ? `  thresholds failed: ${failed.join('; ')}` : '  thresholds passed');
  lines.push(`  verdict: ${out.path ? `bin/proxybench table ${out.path}` : 'bin/proxybench table <result file>'}`);
  if (r.behind_schedule !== undefined) lines.push(`  behind schedule ${num(r.behind_schedule)} of ${num(r.requests)} (whether the rate was sustained: the verdict's)`);
  lines.push(`  result ${out.path || '–'}`);
  if (out.note) lines.push(`  (${out.note})`);
  lines.push('');
  return lines.join('\n');
}
