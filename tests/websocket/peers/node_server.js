// Node ws as an echo server: argv = takeover (0/1), window bits. Prints its port.
const WebSocket = require('ws');
const [takeover, bits] = [process.argv[2] === '1', Number(process.argv[3])];
const wss = new WebSocket.Server({
  host: '127.0.0.1', port: 0, maxPayload: 1 << 25,
  perMessageDeflate: {
    serverNoContextTakeover: !takeover, clientNoContextTakeover: !takeover,
    serverMaxWindowBits: bits, clientMaxWindowBits: bits, threshold: 0,
  },
}, () => console.log(wss.address().port));
wss.on('connection', (ws) => {
  ws.send('extensions: ' + ws.extensions);
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
