using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Exporters.Csv;
using BenchmarkDotNet.Reports;
using Perfolizer.Horology;
using Perfolizer.Metrology;

namespace CoapNet.Benchmarks;

/// <summary>The one configuration every benchmark class runs with (passed to the switcher in <see cref="Program"/>).</summary>
internal static class BenchmarkConfig
{
    public static IConfig Create()
    {
        // charts.sh reads the CSV: fixed units (ns, bytes) named in the header and bare numbers in the
        // cells, so the shell step parses no units. Semicolons, because the invariant culture groups
        // thousands with commas. Add `--exporters json` for BenchmarkDotNet's JSON as well.
        SummaryStyle csvStyle = new(
            SummaryStyle.Default.CultureInfo,
            printUnitsInHeader: true,
            SizeUnit.B,
            TimeUnit.Nanosecond,
            printUnitsInContent: false,
            printZeroValuesInContent: true,
            maxParameterColumnWidth: 40,
            ratioStyle: RatioStyle.Value);

        return ManualConfig.CreateEmpty()
            .AddColumnProvider(DefaultColumnProviders.Instance)
            .AddLogger(DefaultConfig.Instance.GetLoggers().ToArray())
            .AddAnalyser(DefaultConfig.Instance.GetAnalysers().ToArray())
            .AddValidator(DefaultConfig.Instance.GetValidators().ToArray())
            .AddDiagnoser(MemoryDiagnoser.Default)
            .AddColumn(StatisticColumn.Median)
            .AddExporter(MarkdownExporter.GitHub)
            .AddExporter(new CsvExporter(CsvSeparator.Semicolon, csvStyle))
            .WithSummaryStyle(SummaryStyle.Default.WithMaxParameterColumnWidth(40));
    }
}
