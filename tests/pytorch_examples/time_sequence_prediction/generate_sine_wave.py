# Upstream: github.com/pytorch/examples, time_sequence_prediction/generate_sine_wave.py.
# Changed: `import torch` -> `import lucid as torch`, and the data size: L = 100 samples of
# N = 10 waves (upstream: 1,000 of 100), so that train.py runs in seconds.
import numpy as np
import lucid as torch

np.random.seed(2)

T = 20
L = 100
N = 10

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
torch.save(data, open('traindata.pt', 'wb'))
