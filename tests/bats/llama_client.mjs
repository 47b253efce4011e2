// A real client of a GGUF model: node-llama-cpp (llama.cpp) loads each
// MODEL on the CPU, without building anything, and prints one JSON line per
// model with the general.name and chat template it reports and the first 4
// tokens greedy decoding gives after "Hello world". The models after
// --no-mmap have their weights read with read(2); those first or after
// --mmap, mapped (llama.cpp's default).
//
//   usage: NODE_PATH=DIR/node_modules node llama_client.mjs [[--mmap|--no-mmap] MODEL...]...
//   (DIR from scripts/fixtures/llama-client-setup; imported by path,
//   since ES modules do not read NODE_PATH)
import {createRequire} from "node:module";
import path from "node:path";

const loads = [];
let useMmap = true;
for (const arg of process.argv.slice(2)) {
    if (arg === "--mmap" || arg === "--no-mmap")
        useMmap = arg === "--mmap";
    else
        loads.push({modelPath: arg, useMmap});
}
if (loads.length === 0) {
    console.error("usage: node llama_client.mjs [[--mmap|--no-mmap] MODEL...]...");
    process.exit(2);
}

const modules = process.env.NODE_PATH;
const require = createRequire(path.join(modules, "index.js"));
const {getLlama} = await import(require.resolve("node-llama-cpp"));

// One process loads every model: starting llama.cpp is most of the time.
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
for (const {modelPath, useMmap} of loads) {
    const model = await llama.loadModel({modelPath, useMmap});
    // One thread: greedy tokens do not depend on the count, and threads
    // that wait for each other by spinning take seconds a token on a
    // machine whose cores other jobs keep busy.
    const context = await model.createContext({contextSize: 256, threads: 1});
    const sequence = context.getSequence();
    const tokens = [];
    for await (const token of sequence.evaluate(model.tokenize("Hello world"), {temperature: 0})) {
        tokens.push(Number(token));
        if (tokens.length === 4)
            break;
    }
    console.log(JSON.stringify({
        model: modelPath,
        mmap: useMmap,
        name: model.fileInfo.metadata.general?.name,
        template: model.fileInfo.metadata.tokenizer?.chat_template,
        tokens,
    }));
    await context.dispose();
    await model.dispose();
}
await llama.dispose();
