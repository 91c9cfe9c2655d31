"""Functions that lucid.multiprocessing tests start in new processes: a module of their
own, so a spawned child imports lucid and this, not the test module's torch."""

import os

import lucid


def rank_writes(rank, folder, scale):
    t = lucid.arange(3, dtype=lucid.float32) * scale + rank
    lucid.save(t, f"{folder}/rank{rank}.pt")


def rank_fails(rank):
    if rank == 1:
        raise ValueError(f"rank {rank} is unhappy")


def rank_exits(rank):
    os._exit(3 if rank == 0 else 0)
