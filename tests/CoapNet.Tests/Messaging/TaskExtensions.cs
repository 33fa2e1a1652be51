using Xunit.Sdk;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// In virtual time a task completes during a delivery or an advance, or never: awaiting one that is
/// still running would hang the test instead of failing it. <c>await task.Done()</c> fails at once.
/// </summary>
internal static class TaskExtensions
{
    public static Task<T> Done<T>(this Task<T> task)
        => task.IsCompleted ? task : throw new XunitException("The task is still running: nothing the test did completed it.");

    public static Task Done(this Task task)
        => task.IsCompleted ? task : throw new XunitException("The task is still running: nothing the test did completed it.");
}
