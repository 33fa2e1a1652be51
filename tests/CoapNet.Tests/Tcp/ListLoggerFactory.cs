using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Tcp;

/// <summary>Keeps every log line at warning level and above (or from the level it is given), for tests that check what was reported.</summary>
internal sealed class ListLoggerFactory(LogLevel minimum = LogLevel.Warning) : ILoggerFactory, ILogger
{
    private readonly List<string> _warnings = [];
    private readonly List<IReadOnlyList<string>> _warningKeys = [];

    /// <summary>The structured property names of each warning, in the order of <see cref="Warnings"/>.</summary>
    public IReadOnlyList<IReadOnlyList<string>> WarningKeys
    {
        get
        {
            lock (_warnings)
            {
                return [.. _warningKeys];
            }
        }
    }

    public IReadOnlyList<string> Warnings
    {
        get
        {
            lock (_warnings)
            {
                return [.. _warnings];
            }
        }
    }

    public ILogger CreateLogger(string categoryName) => this;

    public void AddProvider(ILoggerProvider provider)
    {
    }

    public void Dispose()
    {
    }

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => logLevel >= minimum;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (IsEnabled(logLevel))
        {
            lock (_warnings)
            {
                _warnings.Add(formatter(state, exception));
                List<string> keys = [];
                if (state is IReadOnlyList<KeyValuePair<string, object?>> properties)
                {
                    foreach (KeyValuePair<string, object?> property in properties)
                    {
                        keys.Add(property.Key);
                    }
                }

                _warningKeys.Add(keys);
            }
        }
    }
}
