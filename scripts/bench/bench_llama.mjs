// llama.cpp as users run it, timed: node-llama-cpp loads MODEL on the CPU
// and greedy decoding gives the first 4 tokens after "Hello world" (as
// tests/bats/llama_client.mjs does). Prints one line:
//
//   TOKENS LOADED_MS FIRST_MS DONE_MS
//
// TOKENS comma-separated; the times in ms from the process's start until
// the model was loaded, the first token came and the fourth did.
//
//   usage: node bench_llama.mjs NODE_MODULES MODEL MMAP THREADS
//   NODE_MODULES  node_modules of scripts/fixtures/llama-client-setup's
//                 directory (imported by path: ES modules ignore NODE_PATH)
//   MMAP          1: useMmap true (llama.cpp maps the file), 0: false (it
//                 reads the file into memory)
//   THREADS       llama.cpp's threads; 0 for node-llama-cpp's default
import {createRequire} from "node:module";
import path from "node:path";

const [modules, modelPath, mmap, threads] = process.argv.slice(2);
const require = createRequire(path.join(modules, "index.js"));
const {getLlama} = await import(require.resolve("node-llama-cpp"));

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, useMmap: mmap === "1"});
const loaded = performance.now();
const context = await model.createContext({contextSize: 256, threads: Number(threads) || undefined});
const sequence = context.getSequence();
const tokens = [];
let first = 0;
for await (const token of sequence.evaluate(model.tokenize("Hello world"), {temperature: 0})) {
    tokens.push(Number(token));
    if (tokens.length === 1)
        first = performance.now();
    if (tokens.length === 4)
        break;
}
const done = performance.now();
console.log(tokens.join(","), loaded.toFixed(1), first.toFixed(1), done.toFixed(1));
await context.dispose();
await model.dispose();
await llama.dispose();
