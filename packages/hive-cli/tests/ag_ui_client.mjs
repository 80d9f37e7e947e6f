// Drives hive serve's AG-UI route with the real @ag-ui/client HttpAgent: one run that ends with an approval
// interrupt, then the run that resumes it approved. Prints what the client saw as one JSON line.
//   node ag_ui_client.mjs NPM_PREFIX URL TOKEN
import { createRequire } from "node:module";
import path from "node:path";

const [prefix, url, token] = process.argv.slice(2);
const require = createRequire(path.join(prefix, "resolve.js"));
const { HttpAgent } = require("@ag-ui/client");

const agent = new HttpAgent({
  url: `${url}/api/ag-ui`,
  headers: { Authorization: `Bearer ${token}` },
  threadId: "npm-thread",
});
const seen = [];
const subscriber = { onEvent: ({ event }) => { seen.push(event.type); } };

agent.addMessage({ id: "u1", role: "user", content: "write the config" });
await agent.runAgent({ runId: "npm-run-1" }, subscriber);
const interrupts = agent.pendingInterrupts.map((interrupt) => ({ ...interrupt }));
const first = seen.splice(0);
const resume = interrupts.map((interrupt) => ({
  interruptId: interrupt.id,
  status: "resolved",
  payload: { approved: true },
}));
await agent.runAgent({ runId: "npm-run-2", resume }, subscriber);
console.log(JSON.stringify({
  first,
  interrupts,
  second: seen,
  pending: agent.pendingInterrupts,
  messages: agent.messages,
}));
