// What llama.cpp allocates on a GPU and on the host, per -ngl and cache
// type: node-llama-cpp's Vulkan build (the pinned real client) loads each
// MODEL with gpuLayers NGL and creates a context of each CTX with f16, q8_0
// and q4_0 K and V caches (llama.cpp's n_ubatch of 512, one sequence, flash
// attention on "auto"), and prints one JSON line per (model, ngl, ctx,
// type): the buffer lines llama.cpp logged (model, KV, RS, compute, output,
// per buffer type), node-llama-cpp's getMemoryBreakdown() of the model and
// of the context (llama.cpp's exact buffer sizes, host and GPU), and
// `refused` when llama.cpp made no context.
//
//   usage: NODE_PATH=DIR/node_modules GGML_VK_VISIBLE_DEVICES=0 XDG_RUNTIME_DIR=DIR \
//          node offload_client.mjs CTX,CTX NGL,NGL,... MODEL...
//   NGL: a number, or half (block_count / 2), all (block_count + 1)
//   env: OFFLOAD_CLIENT_TYPES  the cache types, comma-separated (F16,Q8_0,Q4_0)
//        COMPUTE_GRAPH_LOG     where scripts/tools/compute-graph's shim, when
//                              preloaded, logs llama.cpp's graphs: a line
//                              "# MODEL ngl NGL ctx CTX type TYPE" goes there
//                              before each context's
import {appendFileSync} from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";

const [contexts, ngls, ...models] = process.argv.slice(2);
if (!contexts || !ngls || models.length === 0) {
    console.error("usage: node offload_client.mjs CTX,CTX NGL,NGL,... MODEL...");
    process.exit(2);
}
const require = createRequire(path.join(process.env.NODE_PATH, "index.js"));
const {getLlama, LlamaLogLevel, readGgufFileInfo} = await import(require.resolve("node-llama-cpp"));

let lines = [];
const llama = await getLlama({
    gpu: "vulkan", build: "never", logLevel: LlamaLogLevel.debug,
    logger: (level, message) => {
        for (const line of String(message).split("\n"))
            if (/buffer size =|does not divide/.test(line)) lines.push(line.trim());
    },
});
if (llama.gpu !== "vulkan") {
    console.error("offload_client: no Vulkan device");
    process.exit(1);
}
// llama.cpp's log arrives on the next turns of the event loop
const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

const types = (process.env.OFFLOAD_CLIENT_TYPES || "F16,Q8_0,Q4_0").split(",");
for (const modelPath of models) {
    const info = await readGgufFileInfo(modelPath, {readTensorInfo: false});
    const arch = info.metadata.general.architecture;
    const nLayer = Number(info.metadata[arch]?.block_count ?? 0);
    const resolve = (s) => s === "half" ? Math.floor(nLayer / 2) : s === "all" ? nLayer + 1 : Number(s);
    for (const ngl of [...new Set(ngls.split(",").map(resolve))]) {
        lines = [];
        const model = await llama.loadModel({modelPath, gpuLayers: ngl, ignoreMemorySafetyChecks: true});
        await settle();
        const modelLines = lines;
        const modelBreakdown = model._model.getMemoryBreakdown();
        // node-llama-cpp gives llama.cpp one more than the batch asked for
        // when the model has sliding-window layers: ask one less, for 512.
        const batchSize = 512 - (model.fileInsights.swaSize > 0 ? 1 : 0);
        for (const ctx of contexts.split(",").map(Number)) {
            for (const type of types) {
                lines = [];
                if (process.env.COMPUTE_GRAPH_LOG)
                    appendFileSync(process.env.COMPUTE_GRAPH_LOG, `# ${modelPath} ngl ${ngl} ctx ${ctx} type ${type}\n`);
                let refused = null, contextBreakdown = null;
                try {
                    const context = await model.createContext({
                        contextSize: ctx, batchSize, sequences: 1, threads: 1, flashAttention: "auto",
                        ignoreMemorySafetyChecks: true,
                        experimentalKvCacheKeyType: type, experimentalKvCacheValueType: type,
                    });
                    await settle();
                    contextBreakdown = context._ctx.getMemoryBreakdown();
                    await context.dispose();
                } catch (e) {
                    refused = String(e.message ?? e);
                }
                await settle();
                console.log(JSON.stringify({
                    model: modelPath, ngl, ctx, type: type.toLowerCase(), refused,
                    breakdown: {model: modelBreakdown, context: contextBreakdown},
                    lines: [...modelLines, ...lines],
                }));
            }
        }
        await model.dispose();
    }
}
await llama.dispose();
