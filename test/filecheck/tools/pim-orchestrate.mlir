// pim-orchestrate: schedule on stdout, one-line errors, exit codes 1 (user) and 2 (usage).

// RUN: pim-orchestrate --model swin-t --img 224 | filecheck %s --check-prefix=OK
// OK: model swin-t img 224x224 on allspark-16x16 (16x16 nodes, 8 MiB/node)
// OK-NEXT: solver: optimal, gap 0.00%
// OK-NEXT: stage  branches  blocks  layers
// OK-NEXT: {{^}}    1        64       2
// OK: utilization 0.
// OK: memory/node reuse+sharing: {{.*}} (fits)

// The issue's command: Swin-B at 640^2 has ceil(160/7)^2 = 529, 12^2 = 144, 6^2 = 36 and
// 3^2 = 9 windows of 7x7 in its four stages (2, 2, 18, 2 blocks).
// RUN: pim-orchestrate --model swin-b --img 640 --preset allspark-16x16 | filecheck %s --check-prefix=SWINB
// SWINB: model swin-b img 640x640 on allspark-16x16 (16x16 nodes, 8 MiB/node)
// SWINB-NEXT: solver: optimal, gap 0.00%
// SWINB-NEXT: stage  branches  blocks  layers
// SWINB-NEXT: {{^}}    1       529       2
// SWINB-NEXT: {{^}}    2       144       2
// SWINB-NEXT: {{^}}    3        36      18
// SWINB-NEXT: {{^}}    4         9       2
// SWINB: memory/node reuse+sharing: {{.*}} (fits)

// A written schedule (the seed's Table V) is verified: it breaks constraint 5 in our model.
// RUN: sh -c "pim-orchestrate --model swin-b --img 640 --schedule '1x1,1x1,4x2;2x1,4x4;8x2,8x2,16x4;4x4'; echo exit=\$?" 2>&1 | filecheck %s --check-prefix=TABLEV
// TABLEV: pim-orchestrate: error: schedule: memory per node {{[0-9.]+}} MiB weights + {{[0-9.]+}} MiB workspace > node_cap 8.00 MiB (constraint 5, with weight reuse and sharing)
// TABLEV-NEXT: exit=1

// RUN: sh -c 'pim-orchestrate --model swin-b --mesh 2x2; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SMALL
// SMALL: pim-orchestrate: error: model 'swin-b' cannot fit the node capacity under any scheme: weights need at least {{[0-9.]+}} MiB and workspace {{[0-9.]+}} MiB per node > node_cap 8.00 MiB (constraint 5, memory capacity) on the 2x2 mesh; use a larger mesh or more memory per node
// SMALL-NEXT: exit=1

// RUN: sh -c 'pim-orchestrate --model vit-b --node-cap-mib 0.1; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CAP
// CAP: pim-orchestrate: error: model 'vit-b' cannot fit the node capacity under any scheme: {{.*}} > node_cap 0.10 MiB (constraint 5, memory capacity)
// CAP-NEXT: exit=1

// RUN: sh -c 'pim-orchestrate --model bert; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MODEL
// MODEL: pim-orchestrate: error: unknown model 'bert' (choose from vit-t, vit-s,
// MODEL-NEXT: exit=1

// RUN: sh -c 'pim-orchestrate --model swin-t --time-limit abc; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TL
// TL: pim-orchestrate: error: argument --time-limit: expected a number, got 'abc'
// TL-NEXT: exit=2

// RUN: sh -c 'pim-orchestrate --model swin-t --mesh 3by3; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MESH
// MESH: pim-orchestrate: error: argument --mesh: expected ROWSxCOLS, got '3by3'
// MESH-NEXT: exit=2
