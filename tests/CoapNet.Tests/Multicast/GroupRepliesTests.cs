using System.Net;
using CoapNet.Messages;
using CoapNet.Multicast;
using CoapNet.Serialization;

namespace CoapNet.Tests.Multicast;

/// <summary>
/// Where an ACK or a Reset that reached the unicast address goes: to the group endpoint whose notification or response it
/// answers (RFC 7641 sections 3.6 and 4.5; the group endpoint sent it from the unicast address, RFC 7252 section 8.2),
/// else to the unicast endpoint. By the bytes, no socket.
/// </summary>
public sealed class GroupRepliesTests
{
    private static readonly IPEndPoint Client = new(IPAddress.Parse("10.200.0.1"), 40123);
    private readonly MulticastSockets _sockets = new(new CoapMulticastOptions { Port = 0 });

    private MulticastEndpointTransport Group => _sockets.Groups[0];

    [Theory]
    [InlineData(CoapMessageType.Confirmable, CoapMessageType.Acknowledgement)]
    [InlineData(CoapMessageType.Confirmable, CoapMessageType.Reset)]
    [InlineData(CoapMessageType.NonConfirmable, CoapMessageType.Reset)]
    public void TheAnswerToAGroupEndpointsMessageGoesToItOnce(CoapMessageType sent, CoapMessageType answer)
    {
        GroupReplies replies = new(capacity: 8);
        replies.Record(Group, Notification(sent, 0x1234), Client);

        replies.Take(Empty(answer, 0x1234), Client).Should().BeSameAs(Group);
        replies.Take(Empty(answer, 0x1234), Client).Should().BeNull("a second copy of the answer is the unicast endpoint's to ignore");
    }

    [Fact]
    public void AnAnswerToAnotherMessageOrFromAnotherPeerIsTheUnicastEndpoints()
    {
        GroupReplies replies = new(capacity: 8);
        replies.Record(Group, Notification(CoapMessageType.Confirmable, 7), Client);

        replies.Take(Empty(CoapMessageType.Acknowledgement, 8), Client).Should().BeNull("another Message ID");
        replies.Take(Empty(CoapMessageType.Acknowledgement, 7), new IPEndPoint(Client.Address, Client.Port + 1)).Should().BeNull("another port is another peer");
        replies.Take(Notification(CoapMessageType.Confirmable, 7), Client).Should().BeNull("a CON is no answer");
        replies.Take(Empty(CoapMessageType.Acknowledgement, 7), new IPEndPoint(Client.Address.MapToIPv6(), Client.Port)).Should().BeSameAs(Group, "an IPv4 peer mapped into IPv6 is the same peer");
    }

    [Fact]
    public void AnAckOrResetTheGroupEndpointSentIsNotRemembered()
    {
        GroupReplies replies = new(capacity: 8);
        replies.Record(Group, Empty(CoapMessageType.Acknowledgement, 9), Client);

        replies.Take(Empty(CoapMessageType.Reset, 9), Client).Should().BeNull("only a CON or a NON is answered");
    }

    [Fact]
    public void PastItsCapacityTheOldestMessageIsForgotten()
    {
        GroupReplies replies = new(capacity: 2);
        replies.Record(Group, Notification(CoapMessageType.NonConfirmable, 1), Client);
        replies.Record(Group, Notification(CoapMessageType.NonConfirmable, 2), Client);
        replies.Record(Group, Notification(CoapMessageType.NonConfirmable, 1), Client);
        replies.Record(Group, Notification(CoapMessageType.NonConfirmable, 3), Client);

        replies.Take(Empty(CoapMessageType.Reset, 2), Client).Should().BeNull("the oldest of three went");
        replies.Take(Empty(CoapMessageType.Reset, 1), Client).Should().BeSameAs(Group, "sent again since, it is as new as then");
        replies.Take(Empty(CoapMessageType.Reset, 3), Client).Should().BeSameAs(Group);
    }

    private static byte[] Notification(CoapMessageType type, ushort messageId)
    {
        CoapMessage notification = new() { Type = type, Code = CoapCode.Content, MessageId = messageId, Token = new byte[] { 1, 2 }, Observe = 5 };
        return CoapMessageSerializer.Udp.Serialize(notification);
    }

    private static byte[] Empty(CoapMessageType type, ushort messageId) => CoapMessageSerializer.Udp.Serialize(CoapMessage.CreateEmpty(type, messageId));
}
