"""A sweep on a real dask.distributed cluster (worker processes) gives the rows it gives in-process."""

from dask.distributed import Client, LocalCluster

from rmqlib.sim import run_variants, scenarios, sweep

SMALL = scenarios.crash(produce_rate_per_queue=1.0, duration_ms=70_000, drain_ms=10_000)


def test_a_sweep_on_a_local_cluster_of_worker_processes_matches_the_in_process_rows():
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        pids = set(client.run(lambda: __import__("os").getpid()).values())
        assert len(pids) == 2 and __import__("os").getpid() not in pids  # real worker processes
        executor = client.get_executor()
        remote = sweep(
            SMALL, "rebalance_interval_ms", [10_000, 20_000], seeds=[0, 1], executor=executor, progress=False
        )
        variants = run_variants(
            {"crash": SMALL, "steady": scenarios.steady_state(duration_ms=20_000, drain_ms=5_000)},
            seeds=[3],
            executor=executor,
        )
    assert remote == sweep(SMALL, "rebalance_interval_ms", [10_000, 20_000], seeds=[0, 1], progress=False)
    assert variants == run_variants(
        {"crash": SMALL, "steady": scenarios.steady_state(duration_ms=20_000, drain_ms=5_000)}, seeds=[3]
    )
    assert [row["rebalance_interval_ms"] for row in remote] == [10_000, 10_000, 20_000, 20_000]
