using BenchmarkDotNet.Running;

namespace CoapNet.Benchmarks;

internal static class Program
{
    public static int Main(string[] args)
    {
        // The interleaved async/sync harness is not a BenchmarkDotNet run (see its remarks).
        if (InterleavedAsyncRatio.IsRequested(args))
        {
            try
            {
                return InterleavedAsyncRatio.Run(args[1..]);
            }
            catch (ArgumentException exception)
            {
                Console.Error.WriteLine(exception.Message);
                return 2;
            }
        }

        if (InterleavedBoundHandler.IsRequested(args))
        {
            return InterleavedBoundHandler.Run();
        }

        // The 1 GB case needs several GB of RAM and minutes per method, so `--filter *` must not start it
        // by accident: it joins the switcher only when named (`--filter *Gigabyte*`) or when listing.
        List<Type> types = [typeof(ThesisMatrixBenchmarks), typeof(EverydayMessageBenchmarks), typeof(OptionScalingBenchmarks), typeof(RequestBuildBenchmarks), typeof(BoundHandlerBenchmarks), typeof(OscoreBenchmarks)];
        if (GigabyteBenchmarks.IsRequested(args))
        {
            types.Add(typeof(GigabyteBenchmarks));
        }

        BenchmarkSwitcher.FromTypes([.. types]).Run(args, BenchmarkConfig.Create());
        return 0;
    }
}
