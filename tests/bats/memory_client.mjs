// llama.cpp's own figures for the KV cache and recurrent state: node-llama-cpp
// (the pinned real client) loads each MODEL on the CPU and creates a context
// of each CTX with f16, q8_0 and q4_0 K and V caches (llama.cpp's own
// n_ubatch of 512; flash attention on auto, llama.cpp's default), and prints
// one JSON line per context with the lines llama.cpp logs while creating it
// (n_ctx, n_ubatch, "llama_kv_cache: size = ...", "llama_memory_recurrent:
// size = ...") and, beside them, node-llama-cpp's own estimate of the
// context's memory (GgufInsights), for comparison only. A context llama.cpp
// refuses (a cache type whose blocks do not divide a head) has `refused` set.
//
//   usage: NODE_PATH=DIR/node_modules node memory_client.mjs CTX,CTX,... MODEL...
import {createRequire} from "node:module";
import path from "node:path";

const [contexts, ...models] = process.argv.slice(2);
if (!contexts || models.length === 0) {
    console.error("usage: node memory_client.mjs CTX,CTX,... MODEL...");
    process.exit(2);
}
const require = createRequire(path.join(process.env.NODE_PATH, "index.js"));
const {getLlama, LlamaLogLevel, GgmlType} = await import(require.resolve("node-llama-cpp"));

let lines = [];
const llama = await getLlama({
    gpu: false, build: "never", logLevel: LlamaLogLevel.debug,
    logger: (level, message) => {
        for (const line of String(message).split("\n")) {
            if (/^llama_(kv_cache|memory_recurrent): size = |^llama_context: n_(ubatch|ctx) |does not divide|quantized V cache requires/.test(line))
                lines.push(line.trim());
        }
    },
});
const types = ["F16", "Q8_0", "Q4_0"];
for (const modelPath of models) {
    const model = await llama.loadModel({modelPath});
    // node-llama-cpp gives llama.cpp one more than the batch asked for when
    // the model has sliding-window layers: ask one less, for 512.
    const batchSize = 512 - (model.fileInsights.swaSize > 0 ? 1 : 0);
    for (const ctx of contexts.split(",").map(Number)) {
        for (const type of types) {
            lines = [];
            let refused = null;
            try {
                const context = await model.createContext({
                    contextSize: ctx, batchSize, threads: 1, flashAttention: "auto",
                    experimentalKvCacheKeyType: type, experimentalKvCacheValueType: type,
                });
                await context.dispose();
            } catch (e) {
                // llama.cpp refused the context: its reason is among the lines
                refused = String(e.message ?? e);
            }
            const logged = lines;
            let estimate = null;
            if (process.env.MEMORY_CLIENT_NO_ESTIMATE) {
                console.log(JSON.stringify({model: modelPath, ctx, type: type.toLowerCase(), lines: logged, refused}));
                continue;
            }
            try {
                estimate = model.fileInsights.estimateContextResourceRequirements({
                    contextSize: ctx, modelGpuLayers: 0, batchSize: 512, flashAttention: true,
                    includeGraphOverhead: false, kvCacheKeyType: GgmlType[type], kvCacheValueType: GgmlType[type],
                }).cpuRam;
            } catch (e) {
                estimate = String(e.message ?? e);
            }
            console.log(JSON.stringify({model: modelPath, ctx, type: type.toLowerCase(), lines: logged, refused, estimate}));
        }
    }
    await model.dispose();
}
await llama.dispose();
