"""Reference workloads described as pure Python data (no IR, no solver).

``vit`` holds the vision-transformer families of the Allspark seed as
dependency graphs of computational branches.
"""
