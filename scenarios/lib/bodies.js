// The bodies the upstream serves, byte for byte (extensions/upstream/body.go, upstream/README.md
// "Routes"), defined once for the scripts: every client path compares what it received with them,
// since a proxy that rewrites bytes and keeps the length passes every size check. They are all
// ASCII, so a string's length is its byte count and its UTF-16 units are its bytes.
// This module imports nothing and does nothing but define them: extensions/load/bodies_test.go
// evaluates it on its own and holds its values to what the upstream's handlers serve.

// PATTERN is what the upstream's patterned bodies repeat: 0-9a-zA-Z, 62 bytes.
export const PATTERN = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

// pattern is PATTERN repeated and cut at n bytes: the / body is pattern(4096), and every chunk
// of /stream?chunk_bytes=n is pattern(n), the pattern's prefix.
export function pattern(n) {
  return PATTERN.repeat(Math.ceil(n / PATTERN.length)).slice(0, n);
}

// The / body: the load scenarios' every answer, and the native loop's expect option.
export const ROOT_BYTES = 4096;
export const ROOT_BODY = pattern(ROOT_BYTES);

// The /json document, static: 290 bytes.
export const JSON_BODY =
  '{"service":"proxybench-upstream","version":1,"ok":true,' +
  '"items":[{"id":1,"name":"alpha","tags":["proxy","bench"],"score":0.98},' +
  '{"id":2,"name":"beta","tags":["stream","sse"],"score":0.92},' +
  '{"id":3,"name":"gamma","tags":["upload","ws"],"score":0.89}],' +
  '"meta":{"region":"loopback","cache":false}}';

// streamChunk is one chunk of /stream?chunk_bytes=chunkBytes: the pattern's first chunkBytes.
export function streamChunk(chunkBytes) {
  return pattern(chunkBytes);
}

// sseTick is the event /sse sends as its seq-th, stamped ts (the upstream's clock, Unix ms):
// exactly these bytes, its blank line included.
export function sseTick(seq, ts) {
  return `event: tick\ndata: {"seq":${seq},"ts":${ts}}\n\n`;
}
