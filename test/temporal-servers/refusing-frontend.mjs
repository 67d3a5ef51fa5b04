// Stands in for `temporal server start-dev` where only its start-up matters: its frontend port opens at once, but
// answers GetSystemInfo with UNAVAILABLE "Frontend is not healthy yet" the first REFUSALS times (default 3), as
// Temporal's frontend does for a moment after its port opens. Its "Web UI" port answers with what the frontend answered.
// ANSWER_DELAY_MS (default 0) holds each answer back that long, as a frontend on a busy machine may.
import http from 'node:http';
import grpc from '@grpc/grpc-js';

const flag = (name) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
};
const refusals = Number(process.env.REFUSALS ?? 3);
const answerDelayMs = Number(process.env.ANSWER_DELAY_MS ?? 0);
const calls = { refused: 0, answered: 0 };
const bytes = (buffer) => buffer;
const getSystemInfo = {
  path: '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo',
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
};

const server = new grpc.Server();
server.addService(
  { getSystemInfo },
  {
    getSystemInfo: (call, callback) => setTimeout(() => answer(call, callback), answerDelayMs),
  },
);

function answer(_call, callback) {
  if (calls.refused < refusals) {
    calls.refused += 1;
    callback({ code: grpc.status.UNAVAILABLE, details: 'Frontend is not healthy yet' });
    return;
  }
  calls.answered += 1;
  // An empty GetSystemInfoResponse: no fields, no bytes.
  callback(null, Buffer.alloc(0));
}
server.bindAsync(`127.0.0.1:${flag('--port')}`, grpc.ServerCredentials.createInsecure(), (error) => {
  if (error) throw error;
});
const ui = flag('--ui-port');
if (ui !== undefined)
  http.createServer((_request, response) => response.end(JSON.stringify(calls))).listen(Number(ui), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
