module RollingStats

export rolling_mean, summarize

"""
    rolling_mean(xs, window)

Mean of each window of `window` consecutive values.
"""
function rolling_mean(xs::AbstractVector{<:Real}, window::Int=3)
    n = length(xs)
    window > n && throw(ArgumentError("window $window is longer than $(n) values"))
    out = Vector{Float64}(undef, n - window + 1)
    acc = sum(xs[1:window])
    out[1] = acc / window
    for i in 2:length(out)
        acc += xs[i + window - 1] - xs[i - 1]
        out[i] = acc / window
    end
    return out
end

function summarize(xs; digits=2)
    if isempty(xs)
        @warn "no values to summarize"
        return nothing
    else
        m = round(sum(xs) / length(xs); digits=digits)
    end
    try
        println("mean = $m over $(length(xs)) values, last = $(xs[end])")
    catch err
        @error "cannot print" exception=err
    end
    return m
end

end # module
