// A real client of a GGUF model: node-llama-cpp (llama.cpp) loads MODEL on
// the CPU, without building anything, and prints one JSON line with the
// general.name and chat template it reports and the first 4 tokens greedy
// decoding gives after "Hello world".
//
//   usage: NODE_PATH=DIR/node_modules node llama_client.mjs MODEL
//   (DIR from scripts/fixtures/llama-client-setup; imported by path,
//   since ES modules do not read NODE_PATH)
import {createRequire} from "node:module";
import path from "node:path";

const modules = process.env.NODE_PATH;
const require = createRequire(path.join(modules, "index.js"));
const {getLlama} = await import(require.resolve("node-llama-cpp"));

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: process.argv[2]});
const context = await model.createContext({contextSize: 256});
const sequence = context.getSequence();
const tokens = [];
for await (const token of sequence.evaluate(model.tokenize("Hello world"), {temperature: 0})) {
    tokens.push(Number(token));
    if (tokens.length === 4)
        break;
}
console.log(JSON.stringify({
    name: model.fileInfo.metadata.general?.name,
    template: model.fileInfo.metadata.tokenizer?.chat_template,
    tokens,
}));
await context.dispose();
await model.dispose();
await llama.dispose();
