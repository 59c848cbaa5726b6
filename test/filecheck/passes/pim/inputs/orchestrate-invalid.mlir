// pim-orchestrate: a model that cannot be scheduled is an error at its pim.model.

// Swin-B needs at least 20.63 MiB of weights per node on a 2x2 mesh (4 nodes).
// expected-error @+1 {{model 'swin-b' cannot fit the node capacity under any scheme}}
"pim.model"() <{model = "swin-b", img = 224 : i64, preset = "allspark-16x16", rows = 2 : i64, cols = 2 : i64}> ({
}) : () -> ()

// -----

// 230 is not a multiple of Swin's 32 (a 4-pixel patch, then three 2x2 merges).
// expected-error @+1 {{image size 230 is not a multiple of 32}}
"pim.model"() <{model = "swin-t", img = 230 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()

// -----

// expected-error @+1 {{unknown model 'gpt-2'}}
"pim.model"() <{model = "gpt-2", img = 224 : i64, preset = "allspark-16x16"}> ({
}) : () -> ()

// -----

// expected-error @+1 {{unknown preset 'tpu'}}
"pim.model"() <{model = "swin-t", img = 224 : i64, preset = "tpu"}> ({
}) : () -> ()
