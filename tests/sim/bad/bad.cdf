# a CDF whose sizes go down (for bad-cdf.yaml)
100 10
50  20
1000 100
