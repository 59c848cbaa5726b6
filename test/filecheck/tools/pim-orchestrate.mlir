// pim-orchestrate: schedule on stdout, one-line errors, exit codes 1 (user) and 2 (usage).

// RUN: pim-orchestrate --model swin-t --img 224 | filecheck %s --check-prefix=OK
// OK: model swin-t img 224x224 on allspark-16x16 (16x16 nodes, 8 MiB/node)
// OK-NEXT: solver: optimal, gap 0.00%
// OK-NEXT: stage  branches  blocks  layers
// OK-NEXT: {{^}}    1        64       2
// OK: utilization 0.
// OK: memory/node reuse+sharing: {{.*}} (fits)

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
