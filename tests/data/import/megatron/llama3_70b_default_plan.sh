#!/bin/bash
# Llama 3 70B on 8 DGX H100 nodes with the plan of Parallax's default scenario
# (presets/scenarios/default.json): TP 4, PP 4 with 5 virtual stages (4 layers each), CP 2, DP 2,
# distributed optimizer, selective recompute, sequence parallelism, bf16, 128 x 8192 tokens per step.
# Written for the import tests in the style of Megatron-LM's examples/llama scripts (flags as in
# train_llama3_8b_h100_fp8.sh); not an upstream file.

GPUS_PER_NODE=8
NUM_NODES=8
TP=4
PP=4
CP=2
LAYERS_PER_VIRTUAL_STAGE=4

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --node_rank ${NODE_RANK:-0}
    --master_addr ${MASTER_ADDR:-localhost}
    --master_port 6000
)

MODEL_ARGS=(
    --use-mcore-models
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length 8192
    --max-position-embeddings 8192
    --position-embedding-type rope
    --rotary-base 500000
    --swiglu
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --normalization RMSNorm
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --attention-backend fused
)

PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --num-layers-per-virtual-pipeline-stage $LAYERS_PER_VIRTUAL_STAGE
    --context-parallel-size $CP
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 128
    --recompute-granularity selective
    --bf16
    --lr 1.5e-4
    --min-lr 1.5e-5
    --lr-decay-style cosine
    --weight-decay 0.1
    --clip-grad 1.0
    --adam-beta1 0.9
    --adam-beta2 0.95
    --train-iters 100
)

DATA_ARGS=(
    --mock-data
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model meta-llama/Meta-Llama-3-70B
    --log-interval 1
    --eval-iters 0
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${PARALLEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${DATA_ARGS[@]}
