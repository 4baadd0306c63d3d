// Package train holds svtrain, svbench's training loop (Python and PyTorch,
// the one place the project is not Go: train/svtrain, run with
// /usr/bin/python3 train/run.py). The package's only Go is the smoke test
// that runs a few steps of the loop against an in-process svbench server and
// reads what it wrote with svbench report and svbench study.
package train
