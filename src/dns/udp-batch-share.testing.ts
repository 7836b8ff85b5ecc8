// Run by udp-batch.test.ts as a process of its own (argv: marker, "busy" | "free"), with a UDP
// socket bound by the test at descriptor 4: reads it through the batched addon and answers each
// query with [id, marker]. Says the socket's port over IPC; "busy" then blocks its event loop for
// 3 s (a worker that is not running), so the datagrams must go to the other process.
import { loadUdpBatch, openUdpBatch } from "./udp-batch.js";

const [marker, mode] = process.argv.slice(2);
const { binding } = loadUdpBatch();
if (binding === null) throw new Error("addon not loaded");
const socket = openUdpBatch(binding, {
  host: "127.0.0.1",
  port: 0,
  fd: 4,
  recvBufferSize: 0,
  answerNow: (q) => Buffer.from([q[0], q[1], Number(marker)]),
  answerLater: async () => null,
  onError: () => {},
});
process.send?.(socket.port, () => {
  if (mode !== "busy") return;
  const until = Date.now() + 3000;
  while (Date.now() < until) {}
});
process.on("disconnect", () => process.exit(0));
