module hftbench/clients/go

go 1.25

require github.com/HdrHistogram/hdrhistogram-go v1.4.0
