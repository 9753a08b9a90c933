// Node ws as a client of the echo server: argv = url, takeover (0/1), window bits.
const WebSocket = require('ws');
const [url, takeover, bits] = [process.argv[2], process.argv[3] === '1', Number(process.argv[4])];
const ws = new WebSocket(url, {
  perMessageDeflate: {
    serverNoContextTakeover: !takeover, clientNoContextTakeover: !takeover,
    serverMaxWindowBits: bits, clientMaxWindowBits: bits, threshold: 0,
  },
  maxPayload: 1 << 25,
});
const big = Array.from({ length: 3000 }, (_, i) => `{"kind": "t3", "score": ${i}} `).join('');
const sent = ['hi', 'hello '.repeat(500), big, Buffer.alloc(8000, 7), big];
const got = [];
ws.on('open', () => {
  console.log(ws.extensions);
  for (const m of sent) ws.send(m);
  // A fragmented compressed message, and one sent uncompressed.
  ws.send('part one, ', { fin: false }); ws.send('part two', { fin: true });
  ws.send('uncompressed '.repeat(50), { compress: false });
});
ws.on('message', (data, isBinary) => {
  got.push(isBinary ? data : data.toString());
  if (got.length === sent.length + 2) {
    for (let i = 0; i < sent.length; i++) {
      const want = sent[i];
      const ok = Buffer.isBuffer(want) ? want.equals(got[i]) : want === got[i];
      if (!ok) { console.error('message', i, 'differs'); process.exit(1); }
    }
    if (got[sent.length] !== 'part one, part two') { console.error('fragmented differs'); process.exit(1); }
    if (got[sent.length + 1] !== 'uncompressed '.repeat(50)) { console.error('plain differs'); process.exit(1); }
    console.log('ok');
    ws.close();
  }
});
ws.on('error', (e) => { console.error(e); process.exit(1); });
