// scripts/tools/compute-graph's client: node-llama-cpp (its Vulkan build)
// loads MODEL with NGL layers on the GPU and creates one context of CTX
// tokens (n_ubatch 512, one sequence, flash attention auto, f16 cache),
// then prints the compute buffer lines llama.cpp logs.
//   usage: NODE_PATH=DIR/node_modules node compute_graph_client.mjs MODEL NGL CTX
import {createRequire} from "node:module";
import path from "node:path";

const [model, ngl, ctx] = process.argv.slice(2);
const require = createRequire(path.join(process.env.NODE_PATH, "index.js"));
const {getLlama, LlamaLogLevel} = await import(require.resolve("node-llama-cpp"));
const llama = await getLlama({
    gpu: "vulkan", build: "never", logLevel: LlamaLogLevel.debug,
    logger: (level, message) => {
        for (const line of String(message).split("\n"))
            if (/compute buffer size =/.test(line)) console.log(line.trim());
    },
});
const loaded = await llama.loadModel({modelPath: model, gpuLayers: Number(ngl), ignoreMemorySafetyChecks: true});
const context = await loaded.createContext({contextSize: Number(ctx), batchSize: 512, sequences: 1,
    ignoreMemorySafetyChecks: true});
await context.dispose();
await loaded.dispose();
