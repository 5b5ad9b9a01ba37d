"""golden_case.py -- writes one golden case folder (model.hlo + in<i>.npy + expected<i>.npy +
tol.json + GENERATOR) for the make_*.py generators that own their cases; make.py leaves a
folder holding a GENERATOR file alone.  Run by those scripts, not by itself."""
import json
import os

import numpy as np


def write_case(folder, generator, hlo, inputs, expected, tol=None):
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        os.remove(os.path.join(folder, f))
    with open(os.path.join(folder, "model.hlo"), "w") as f:
        f.write(hlo.lstrip())
    for i, a in enumerate(inputs):
        np.save(os.path.join(folder, "in%d.npy" % i), a)
    for i, a in enumerate(expected):
        np.save(os.path.join(folder, "expected%d.npy" % i), a)
    with open(os.path.join(folder, "tol.json"), "w") as f:
        json.dump(tol or {}, f, sort_keys=True)
        f.write("\n")
    with open(os.path.join(folder, "GENERATOR"), "w") as f:
        f.write(generator + "\n")
