using CoapNet.Channels;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The one anti-replay window DTLS records (RFC 6347 section 4.1.2.6) and OSCORE requests (RFC 8613 section 7.4) share:
/// RFC 4303 section 3.4.3's sliding window.
/// </summary>
public sealed class ReplayWindowTests
{
    [Fact]
    public void A_new_window_takes_any_number_once_and_remembers_as_many_below_the_highest_as_its_size()
    {
        CoapReplayWindow window = new(32);

        window.Highest.Should().Be(-1);
        window.IsFresh(0).Should().BeTrue();
        window.Accept(5).Should().BeTrue("the newest yet");
        window.IsFresh(5).Should().BeFalse();
        window.IsFresh(3).Should().BeTrue("inside the window, not seen");
        window.Accept(3).Should().BeFalse("not the newest");
        window.IsFresh(3).Should().BeFalse();

        window.Accept(40).Should().BeTrue();
        window.IsFresh(9).Should().BeTrue("31 below the highest: the window's last place");
        window.IsFresh(8).Should().BeFalse("32 below the highest: older than the window, refused as a replay may be");
        window.IsFresh(41).Should().BeTrue();
    }

    [Fact]
    public void A_window_that_starts_at_a_number_counts_it_and_everything_below_as_seen()
    {
        // A DTLS epoch whose first records were read in the handshake; an OSCORE window set by an echoing request.
        CoapReplayWindow window = new(64, highest: 100);

        window.IsFresh(100).Should().BeFalse();
        window.IsFresh(99).Should().BeFalse();
        window.IsFresh(37).Should().BeFalse();
        window.IsFresh(101).Should().BeTrue();
        window.Accept(103).Should().BeTrue();
        window.IsFresh(101).Should().BeTrue("skipped, inside the window");
        window.IsFresh(100).Should().BeFalse();
        window.Accept(1000).Should().BeTrue("a jump past the whole window clears it");
        window.IsFresh(999).Should().BeTrue();
        window.IsFresh(936).Should().BeFalse();
    }

    [Theory]
    [InlineData(0, -1)]
    [InlineData(65, -1)]
    [InlineData(32, -2)]
    public void A_size_outside_1_to_64_or_a_start_below_minus_one_is_refused(int size, long highest)
    {
        Action make = () => _ = new CoapReplayWindow(size, highest);

        make.Should().Throw<ArgumentOutOfRangeException>();
    }
}
