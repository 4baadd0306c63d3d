"""svtrain: GRPO against svbench serve (E1), with a tiny from-scratch policy on
CPU or a Hugging Face causal LM (--hf-model). See train/README.md."""
