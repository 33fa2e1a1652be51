using System.Runtime.ExceptionServices;

namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// Runs a synchronous (blocking) call on a dedicated thread, optionally under a synchronization
/// context, so the test thread stays free to deliver datagrams and advance virtual time.
/// </summary>
/// <typeparam name="T">The call's result.</typeparam>
public sealed class BlockingCall<T>
{
    private readonly ManualResetEventSlim _done = new();
    private readonly Thread _thread;
    private T? _result;
    private ExceptionDispatchInfo? _exception;

    private BlockingCall(Func<T> call, SynchronizationContext? context)
    {
        _thread = new Thread(() =>
        {
            SynchronizationContext.SetSynchronizationContext(context);
            try
            {
                _result = call();
            }
            catch (Exception e)
            {
                _exception = ExceptionDispatchInfo.Capture(e);
            }
            finally
            {
                _done.Set();
            }
        })
        {
            IsBackground = true,
            Name = "BlockingCall",
        };
    }

    /// <summary>True once the call returned or threw.</summary>
    public bool IsCompleted => _done.IsSet;

    /// <summary>Starts <paramref name="call"/> on a new thread.</summary>
    /// <param name="call">The blocking call.</param>
    /// <param name="context">The synchronization context to install on that thread, or null.</param>
    /// <returns>The running call.</returns>
    public static BlockingCall<T> Start(Func<T> call, SynchronizationContext? context = null)
    {
        BlockingCall<T> running = new(call, context);
        running._thread.Start();
        return running;
    }

    /// <summary>Waits (in real time; only a hung call reaches the bound) for the call to finish.</summary>
    /// <param name="timeout">The bound.</param>
    /// <returns>False when the call is still blocked after <paramref name="timeout"/>.</returns>
    public bool Wait(TimeSpan timeout) => _done.Wait(timeout);

    /// <summary>The result; rethrows what the call threw.</summary>
    /// <returns>The result.</returns>
    /// <exception cref="InvalidOperationException">The call has not finished.</exception>
    public T Result()
    {
        if (!IsCompleted)
        {
            throw new InvalidOperationException("The blocking call has not finished.");
        }

        _exception?.Throw();
        return _result!;
    }
}
