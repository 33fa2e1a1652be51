namespace CoapNet.Tests.Infrastructure;

public class WaitTests
{
    [Fact]
    public void AWaitThatNeverHoldsFailsNamingWhatItAwaited()
    {
        bool never = false;

        Action waiting = () => Wait.Until(() => never, within: TimeSpan.Zero);

        waiting.Should().Throw<TimeoutException>().WithMessage("*for () => never,*");
    }

    [Fact]
    public async Task AnAsyncWaitThatNeverHoldsFailsWithTheGivenDescription()
    {
        Func<Task> waiting = () => Wait.UntilAsync(() => false, "the lamp to turn on", TimeSpan.Zero);

        await waiting.Should().ThrowAsync<TimeoutException>().WithMessage("*for the lamp to turn on,*");
    }

    [Fact]
    public async Task AWaitReturnsOnceItsConditionHolds()
    {
        int asked = 0;

        await Wait.UntilAsync(() => ++asked == 3);
        Wait.Until(() => ++asked == 5);

        asked.Should().Be(5);
    }
}
