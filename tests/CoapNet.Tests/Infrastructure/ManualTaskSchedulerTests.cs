namespace CoapNet.Tests.Infrastructure;

public class ManualTaskSchedulerTests
{
    [Fact]
    public void QueuedTasksRunOnlyWhenPumpedInOrderOnTheCallingThread()
    {
        ManualTaskScheduler scheduler = new();
        TaskFactory factory = new(scheduler);
        List<(int Step, int Thread)> ran = [];

        factory.StartNew(() => ran.Add((1, Environment.CurrentManagedThreadId)));
        factory.StartNew(() => ran.Add((2, Environment.CurrentManagedThreadId)));
        ran.Should().BeEmpty();
        scheduler.QueuedCount.Should().Be(2);

        scheduler.RunNext().Should().BeTrue();
        ran.Should().Equal((1, Environment.CurrentManagedThreadId));
        scheduler.RunUntilIdle().Should().Be(1);
        ran.Should().Equal((1, Environment.CurrentManagedThreadId), (2, Environment.CurrentManagedThreadId));
        scheduler.RunNext().Should().BeFalse();
    }

    [Fact]
    public void WorkQueuedByWorkRunsInTheSamePump()
    {
        ManualTaskScheduler scheduler = new();
        TaskFactory factory = new(scheduler);
        List<string> ran = [];

        factory.StartNew(() =>
        {
            ran.Add("outer");
            factory.StartNew(() => ran.Add("inner"));
        });

        scheduler.RunUntilIdle().Should().Be(2);
        ran.Should().Equal("outer", "inner");
    }

    [Fact]
    public void AnAwaitInsideATaskComesBackToTheSchedulerNotToTheCallersContext()
    {
        ManualTaskScheduler scheduler = new();
        TaskCompletionSource gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
        List<string> ran = [];
        SynchronizationContext? previous = SynchronizationContext.Current;
        BlockedThreadSynchronizationContext context = new();
        SynchronizationContext.SetSynchronizationContext(context);
        try
        {
            Task<Task> started = Task.Factory.StartNew(
                async () =>
                {
                    ran.Add("before");
                    await gate.Task;
                    ran.Add("after");
                },
                CancellationToken.None,
                TaskCreationOptions.None,
                scheduler);
            scheduler.RunUntilIdle();
            ran.Should().Equal("before");

            gate.SetResult();
            ran.Should().Equal(["before"], "the continuation waits for the pump");
            scheduler.RunUntilIdle().Should().Be(1);

            ran.Should().Equal("before", "after");
            started.IsCompletedSuccessfully.Should().BeTrue();
            context.PostCount.Should().Be(0, "the pump clears the caller's context while it runs");
            SynchronizationContext.Current.Should().BeSameAs(context, "and restores it after");
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    [Fact]
    public void WorkThatQueuesWorkForeverFailsThePump()
    {
        ManualTaskScheduler scheduler = new();
        TaskFactory factory = new(scheduler);
        void Again() => factory.StartNew(Again);
        factory.StartNew(Again);

        Action pump = () => scheduler.RunUntilIdle();

        pump.Should().Throw<InvalidOperationException>().WithMessage("*never went idle*");
    }
}
