"""Analyses of a schedule shared by the counters, the IR and the code generator.

footprint.py        the elements one thread block touches, per array; built from
  regions.py          what a footprint is made of (runs, clusters, choices)
  subscripts.py       one subscript split into a fixed and a varying part
  clusters.py         accesses with equal fixed parts counted as one region
  prover.py           `expr >= 0` under the schedule's facts, through constraints.to_z3
staging.py          the shared-memory plan of a variant's cached arrays: what, where, layout
  staging_routes.py   which accesses go to shared memory, and to which slot
  staging_phases.py   when the block copies and synchronises around the body
dependence.py       are the iterations of the meta_for levels independent? which updates are atomic
  updates.py          read-modify-write updates (h[k] += v, maxima) and the CUDA atomic of each

Pure sympy / z3 work on the frozen model: nothing here lowers, prints, or
imports the stages that consume it.
"""
