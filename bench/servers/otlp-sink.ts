// The traced variant's export target: an OTLP/HTTP receiver that counts requests and discards them. It runs in
// its own process so that receiving the exports does not slow the load generator down.
import { createOtlpReceiver } from '@switchboard/runtime/testing';

const sink = await createOtlpReceiver({ record: false });
process.on('message', (message) => {
  if (message === 'count') process.send?.({ count: sink.requestCount });
});
process.send?.({ ready: sink.url });
process.once('disconnect', () => void sink.close());
