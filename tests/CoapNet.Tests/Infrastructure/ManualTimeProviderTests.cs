namespace CoapNet.Tests.Infrastructure;

public class ManualTimeProviderTests
{
    private static readonly DateTimeOffset Start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    [Fact]
    public void TheClockMovesOnlyWhenAdvanced()
    {
        ManualTimeProvider time = new(Start);
        long before = time.GetTimestamp();

        time.GetUtcNow().Should().Be(Start);
        time.Advance(TimeSpan.FromSeconds(2.5));

        time.GetUtcNow().Should().Be(Start.AddSeconds(2.5));
        time.Elapsed.Should().Be(TimeSpan.FromSeconds(2.5));
        time.GetElapsedTime(before).Should().Be(TimeSpan.FromSeconds(2.5));
        (time.GetTimestamp() - before).Should().Be(25_000_000);
        time.TimestampFrequency.Should().Be(TimeSpan.TicksPerSecond);
    }

    [Fact]
    public void ATimerFiresAtItsDueTimeAndSeesThatTime()
    {
        ManualTimeProvider time = new();
        List<TimeSpan> fired = [];
        using ITimer timer = time.CreateTimer(_ => fired.Add(time.Elapsed), null, TimeSpan.FromSeconds(3), Timeout.InfiniteTimeSpan);

        time.Advance(TimeSpan.FromSeconds(3) - TimeSpan.FromTicks(1));
        fired.Should().BeEmpty();
        time.Advance(TimeSpan.FromSeconds(10));

        fired.Should().Equal(TimeSpan.FromSeconds(3));
        time.Elapsed.Should().Be(TimeSpan.FromSeconds(13) - TimeSpan.FromTicks(1));
    }

    [Fact]
    public void AdvanceToNextJumpsToTheNextDueTimerAndFiresEveryTimerDueThen()
    {
        ManualTimeProvider time = new();
        List<string> fired = [];
        using ITimer late = time.CreateTimer(_ => fired.Add("late"), null, TimeSpan.FromSeconds(5), Timeout.InfiniteTimeSpan);
        using ITimer early = time.CreateTimer(_ => fired.Add("early"), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);
        using ITimer tie = time.CreateTimer(_ => fired.Add("tie"), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);

        time.NextDue.Should().Be(TimeSpan.FromSeconds(2));
        time.AdvanceToNext().Should().BeTrue();
        fired.Should().Equal("early", "tie");
        time.Elapsed.Should().Be(TimeSpan.FromSeconds(2));

        time.AdvanceToNext().Should().BeTrue();
        fired.Should().Equal("early", "tie", "late");
        time.NextDue.Should().BeNull();
        time.AdvanceToNext().Should().BeFalse("nothing is armed");
        time.Elapsed.Should().Be(TimeSpan.FromSeconds(5));
    }

    [Fact]
    public void TimersFireInDueOrderAndTiesInSchedulingOrder()
    {
        ManualTimeProvider time = new();
        List<string> fired = [];
        using ITimer late = time.CreateTimer(_ => fired.Add("late"), null, TimeSpan.FromSeconds(5), Timeout.InfiniteTimeSpan);
        using ITimer first = time.CreateTimer(_ => fired.Add("first"), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
        using ITimer tieA = time.CreateTimer(_ => fired.Add("tieA"), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);
        using ITimer tieB = time.CreateTimer(_ => fired.Add("tieB"), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);

        time.Advance(TimeSpan.FromSeconds(10));

        fired.Should().Equal("first", "tieA", "tieB", "late");
    }

    [Fact]
    public void APeriodicTimerFiresEveryPeriodWithinOneAdvance()
    {
        ManualTimeProvider time = new();
        List<TimeSpan> fired = [];
        using ITimer timer = time.CreateTimer(_ => fired.Add(time.Elapsed), null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2));

        time.Advance(TimeSpan.FromSeconds(6));

        fired.Should().Equal(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(5));
    }

    [Fact]
    public void ChangeReschedulesAndInfiniteDisarms()
    {
        ManualTimeProvider time = new();
        int fired = 0;
        using ITimer timer = time.CreateTimer(_ => fired++, null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);

        timer.Change(TimeSpan.FromSeconds(5), Timeout.InfiniteTimeSpan).Should().BeTrue();
        time.Advance(TimeSpan.FromSeconds(4));
        fired.Should().Be(0);
        time.Advance(TimeSpan.FromSeconds(1));
        fired.Should().Be(1);

        timer.Change(TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
        timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        time.Advance(TimeSpan.FromMinutes(1));
        fired.Should().Be(1);
        time.ActiveTimerCount.Should().Be(0);
    }

    [Fact]
    public void ADisposedTimerNeverFiresAndCannotBeChanged()
    {
        ManualTimeProvider time = new();
        int fired = 0;
        ITimer timer = time.CreateTimer(_ => fired++, null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));

        timer.Dispose();
        time.Advance(TimeSpan.FromMinutes(1));

        fired.Should().Be(0);
        timer.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan).Should().BeFalse();
        time.ActiveTimerCount.Should().Be(0);
    }

    [Fact]
    public void TimersCreatedOrChangedInACallbackFireInTheSameAdvanceWhenDue()
    {
        ManualTimeProvider time = new();
        List<string> fired = [];
        ITimer? child = null;
        ITimer? self = null;
        int rearms = 0;
        using ITimer parent = time.CreateTimer(
            _ =>
            {
                fired.Add($"parent@{time.Elapsed.TotalSeconds}");
                child = time.CreateTimer(_ => fired.Add($"child@{time.Elapsed.TotalSeconds}"), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);
            },
            null,
            TimeSpan.FromSeconds(1),
            Timeout.InfiniteTimeSpan);
        self = time.CreateTimer(
            _ =>
            {
                fired.Add($"self@{time.Elapsed.TotalSeconds}");
                if (++rearms < 3)
                {
                    self!.Change(TimeSpan.FromSeconds(rearms * 2), Timeout.InfiniteTimeSpan);
                }
            },
            null,
            TimeSpan.FromSeconds(1.5),
            Timeout.InfiniteTimeSpan);

        time.Advance(TimeSpan.FromSeconds(10));

        fired.Should().Equal("parent@1", "self@1.5", "child@3", "self@3.5", "self@7.5");
        child!.Dispose();
        self.Dispose();
    }

    [Fact]
    public void ATimerDueNowFiresOnAnAdvanceOfZero()
    {
        ManualTimeProvider time = new();
        int fired = 0;
        using ITimer timer = time.CreateTimer(_ => fired++, null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);

        fired.Should().Be(0);
        time.Advance(TimeSpan.Zero);

        fired.Should().Be(1);
    }

    [Fact]
    public void NegativeIntervalsAreRefused()
    {
        ManualTimeProvider time = new();

        Action due = () => time.CreateTimer(_ => { }, null, TimeSpan.FromSeconds(-2), Timeout.InfiniteTimeSpan);
        Action advance = () => time.Advance(TimeSpan.FromSeconds(-1));

        due.Should().Throw<ArgumentOutOfRangeException>();
        advance.Should().Throw<ArgumentOutOfRangeException>();
    }

    [Fact]
    public async Task DelaysAndTimedCancellationFollowTheVirtualClock()
    {
        ManualTimeProvider time = new();
        Task delay = Task.Delay(TimeSpan.FromSeconds(30), time);
        using CancellationTokenSource cancel = new(TimeSpan.FromSeconds(20), time);

        time.Advance(TimeSpan.FromSeconds(20));
        cancel.IsCancellationRequested.Should().BeTrue();
        delay.IsCompleted.Should().BeFalse();

        time.Advance(TimeSpan.FromSeconds(10));
        await delay.WaitAsync(TimeSpan.FromSeconds(10));
    }
}
