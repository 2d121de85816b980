"""ctensor's ops as PyTorch operators: a tiny CNN trained with torch.ops.ctensor.*, eager and compiled.

    PYTHONPATH=build/python python3 examples/frameworks/torch_example.py
"""
import torch

import ctensor.torch as ctt  # registers torch.ops.ctensor.<name> for every op of the registry

C = torch.ops.ctensor
torch.manual_seed(0)
w = (torch.randn(8, 1, 3, 3) * 0.3).requires_grad_()
fc = (torch.randn(2, 8 * 4 * 4) * 0.02).requires_grad_()


def model(x):
    h = C.relu(C.conv2d(x, w, None, [1, 1], [1, 1], [1, 1], 1))  # aten's conv2d schema
    h = ctt.max_pool2d(h, [2, 2], [2, 2], [0, 0], [1, 1], False)  # gradient by ctensor's max_pool2d_backward
    return C.linear(h.reshape(h.shape[0], -1), fc, None)


x = torch.randn(16, 1, 8, 8)
target = torch.nn.functional.one_hot((x.mean((1, 2, 3)) > 0).long(), 2).float()
step = torch.compile(lambda x: C.mean(C.square(C.sub(model(x), target)), None, False), fullgraph=True,
                     backend="aot_eager")
first = None
for i in range(20):
    loss = step(x)
    first = first if first is not None else loss.item()
    gw, gfc = torch.autograd.grad(loss, [w, fc])
    with torch.no_grad():
        w -= 0.01 * gw
        fc -= 0.01 * gfc
    if i % 5 == 0 or i == 19:
        print(f"step {i:2d}  loss {loss.item():.4f}")
assert loss.item() < 0.5 * first, (first, loss.item())
print(f"{len(ctt.registered())} ctensor operators registered in torch.ops.ctensor")
