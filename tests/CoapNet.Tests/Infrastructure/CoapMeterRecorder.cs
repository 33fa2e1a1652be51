using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using CoapNet.Diagnostics;

namespace CoapNet.Tests.Infrastructure;

/// <summary>One measurement of the CoapNet meter: its instrument, its value, a copy of its tags, and whether a collection of an observable instrument made it.</summary>
public readonly record struct CoapMeasurement(string Instrument, double Value, Dictionary<string, object?> Tags, bool Collected);

/// <summary>
/// The CoapNet meter as an OpenTelemetry SDK sees it, through a <see cref="MeterListener"/>: every measurement of every
/// instrument, in order. The meter is process-wide, so a test class that uses it runs in
/// <see cref="ProcessWideCollection"/>.
/// </summary>
public sealed class CoapMeterRecorder : IDisposable
{
    private readonly MeterListener _listener = new();

    public CoapMeterRecorder()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == CoapInstrumentation.MeterName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.SetMeasurementEventCallback<int>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Record(instrument, value, tags));
        _listener.Start();
    }

    /// <summary>What was measured since the start or the last <see cref="ConcurrentQueue{T}.Clear"/>.</summary>
    public ConcurrentQueue<CoapMeasurement> Measurements { get; } = new();

    /// <summary>The measurements of <paramref name="instrument"/> made as things happened (not by a collection).</summary>
    public List<CoapMeasurement> Of(string instrument) => [.. Measurements.Where(m => m.Instrument == instrument && !m.Collected)];

    /// <summary>The tags of each measurement of <paramref name="instrument"/> made as things happened.</summary>
    public List<Dictionary<string, object?>> Tags(string instrument) => [.. Of(instrument).Select(m => m.Tags)];

    /// <summary>Collects the observable instruments now (as an exporter's interval does); their measurements are marked <see cref="CoapMeasurement.Collected"/>.</summary>
    public List<CoapMeasurement> Collect(string instrument)
    {
        int before = Measurements.Count;
        _listener.RecordObservableInstruments();
        return [.. Measurements.Skip(before).Where(m => m.Instrument == instrument && m.Collected)];
    }

    public void Dispose() => _listener.Dispose();

    private void Record<T>(Instrument instrument, T value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        where T : struct
    {
        Dictionary<string, object?> copy = [];
        foreach (KeyValuePair<string, object?> tag in tags)
        {
            copy[tag.Key] = tag.Value;
        }

        Measurements.Enqueue(new CoapMeasurement(instrument.Name, Convert.ToDouble(value, System.Globalization.CultureInfo.InvariantCulture), copy, instrument is ObservableInstrument<T>));
    }
}
