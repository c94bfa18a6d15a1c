#!/bin/sh
# Runs one MPI rank seeing only its own GPU, as Slurm's --gpus-per-task=1 or a per-rank
# CUDA_VISIBLE_DEVICES does: GPU number <node-local rank>. Exits 77 (ctest: skipped) on every rank
# where the node has fewer GPUs than ranks.
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-0}}
local_size=${OMPI_COMM_WORLD_LOCAL_SIZE:-${MPI_LOCALNRANKS:-1}}
gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU')
[ "$gpus" -ge "$local_size" ] || exit 77
CUDA_VISIBLE_DEVICES=$local_rank exec "$@"
