using BenchmarkDotNet.Running;

namespace CoapNet.Benchmarks;

internal static class Program
{
    public static void Main(string[] args)
    {
        // The 1 GB case needs several GB of RAM and minutes per method, so `--filter *` must not start it
        // by accident: it joins the switcher only when named (`--filter *Gigabyte*`) or when listing.
        Type[] types = GigabyteBenchmarks.IsRequested(args)
            ? [typeof(ThesisMatrixBenchmarks), typeof(EverydayMessageBenchmarks), typeof(OptionScalingBenchmarks), typeof(RequestBuildBenchmarks), typeof(GigabyteBenchmarks)]
            : [typeof(ThesisMatrixBenchmarks), typeof(EverydayMessageBenchmarks), typeof(OptionScalingBenchmarks), typeof(RequestBuildBenchmarks)];
        BenchmarkSwitcher.FromTypes(types).Run(args, BenchmarkConfig.Create());
    }
}
