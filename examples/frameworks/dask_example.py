"""ctensor kernels on the chunks of a Dask array, on a local cluster of two worker processes.

    PYTHONPATH=build/python python3 examples/frameworks/dask_example.py
"""
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import ctensor.dask as cd

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        x = da.random.default_rng(0).standard_normal((4000, 1000), chunks=(500, 1000)).astype(np.float32)
        y = cd.reduction("sum", cd.map_blocks("tanh", x), axis=1)     # chunk tasks run ctensor's kernels
        img = da.random.default_rng(1).standard_normal((4, 3, 256, 256), chunks=(1, 3, 64, 64)).astype(np.float32)
        w = np.random.default_rng(2).standard_normal((8, 3, 3, 3)).astype(np.float32)
        conv = cd.conv2d(img, w)                                       # halos of one cell between chunks
        ys, xs = y.compute(), x.compute()
        assert np.allclose(ys, np.tanh(xs).sum(1), rtol=1e-4, atol=1e-3)
        print("row sums of tanh:", ys[:3], "conv2d:", conv.shape, float(conv.sum().compute()))
