using System.Buffers;
using System.IO.Pipelines;
using CoapNet.Messages;
using CoapNet.Serialization;

namespace CoapNet.Tests.Serialization;

/// <summary>
/// One way into <see cref="CoapMessageSerializer"/>: how bytes become messages and messages become bytes.
/// <see cref="SerializerTests"/> is written once against this adapter and runs through every entry point,
/// like System.Text.Json's JsonSerializerWrapper.
/// </summary>
/// <remarks>
/// Malformed input always surfaces as <see cref="CoapFormatException"/>: the Try- and ReadFrame adapters
/// check that the status they got is consistent (no message, a reason, nothing consumed) and then throw it.
/// </remarks>
internal abstract class SerializerEntryPoint
{
    /// <summary>
    /// True for entry points that read a connection (streams, pipes, ReadFrame over a growing buffer): they
    /// read messages one after another until a clean end (no message for empty input), and report input that
    /// ends inside a stream frame as <see cref="CoapFormatErrorReason.UnexpectedEndOfStream"/>. False for the
    /// entry points that take exactly one message in a buffer.
    /// </summary>
    public abstract bool ReadsConnection { get; }

    /// <summary>Reads every message in <paramref name="input"/>: exactly one, or (for a connection) zero or more.</summary>
    /// <exception cref="CoapFormatException">The input is malformed.</exception>
    public abstract Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input);

    /// <summary>Writes <paramref name="message"/> and returns the bytes written.</summary>
    /// <exception cref="ArgumentException">The message cannot be serialized.</exception>
    public abstract Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message);

    public override string ToString() => GetType().Name;

    private static Task<IReadOnlyList<CoapMessage>> One(CoapMessage message) => Task.FromResult<IReadOnlyList<CoapMessage>>([message]);

    /// <summary><see cref="CoapMessageSerializer.Deserialize(ReadOnlySpan{byte})"/> and <see cref="CoapMessageSerializer.Serialize(CoapMessage)"/>.</summary>
    internal sealed class Span : SerializerEntryPoint
    {
        public override bool ReadsConnection => false;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
            => One(serializer.Deserialize((ReadOnlySpan<byte>)input));

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
            => Task.FromResult(serializer.Serialize(message));
    }

    /// <summary>
    /// The zero-copy <see cref="CoapMessageSerializer.Deserialize(ReadOnlyMemory{byte})"/>, and
    /// <see cref="CoapMessageSerializer.Serialize(CoapMessage, System.Span{byte})"/> into a larger buffer whose tail must stay untouched.
    /// </summary>
    internal sealed class Memory : SerializerEntryPoint
    {
        private const byte Guard = 0xA5;

        public override bool ReadsConnection => false;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
            => One(serializer.Deserialize((ReadOnlyMemory<byte>)input));

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            byte[] destination = new byte[serializer.GetSerializedLength(message) + 16];
            destination.AsSpan().Fill(Guard);
            int written = serializer.Serialize(message, destination.AsSpan());
            destination.AsSpan(written).ToArray().Should().OnlyContain(b => b == Guard, "nothing is written past the message");
            return Task.FromResult(destination[..written]);
        }
    }

    /// <summary>
    /// Both <c>TryDeserialize</c> overloads (span and memory), which must agree, and
    /// <see cref="CoapMessageSerializer.TrySerialize"/>, first into a buffer one byte too small.
    /// </summary>
    internal sealed class Try : SerializerEntryPoint
    {
        public override bool ReadsConnection => false;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            bool parsed = serializer.TryDeserialize((ReadOnlySpan<byte>)input, out CoapMessage? message, out CoapFormatError error);
            bool parsedFromMemory = serializer.TryDeserialize((ReadOnlyMemory<byte>)input, out CoapMessage? fromMemory, out CoapFormatError memoryError);
            parsedFromMemory.Should().Be(parsed, "both TryDeserialize overloads run the same parser");
            memoryError.Should().Be(error);
            if (!parsed)
            {
                message.Should().BeNull();
                fromMemory.Should().BeNull();
                error.Reason.Should().NotBe(CoapFormatErrorReason.None, "a rejected message has a reason");
                throw new CoapFormatException(error);
            }

            error.Should().Be(default(CoapFormatError), "a parsed message has no error");
            message!.ShouldMatch(fromMemory!, serializer.Framing);
            return One(message!);
        }

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            int length = serializer.GetSerializedLength(message);
            byte[] small = new byte[length - 1];
            serializer.TrySerialize(message, small, out int smallWritten).Should().BeFalse("the destination is one byte short");
            smallWritten.Should().Be(0);
            small.Should().OnlyContain(b => b == 0, "nothing is written when the message does not fit");

            byte[] destination = new byte[length + 3];
            serializer.TrySerialize(message, destination, out int written).Should().BeTrue();
            written.Should().Be(length);
            return Task.FromResult(destination[..written]);
        }
    }

    /// <summary><see cref="CoapMessageSerializer.Deserialize(Stream)"/> and <see cref="CoapMessageSerializer.Serialize(CoapMessage, Stream)"/> over a <see cref="MemoryStream"/>.</summary>
    internal sealed class SyncStream : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            using MemoryStream stream = new(input, writable: false);
            List<CoapMessage> messages = [];
            while (serializer.Deserialize(stream) is { } message)
            {
                messages.Add(message);
            }

            return Task.FromResult<IReadOnlyList<CoapMessage>>(messages);
        }

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            using MemoryStream stream = new();
            serializer.Serialize(message, stream);
            return Task.FromResult(stream.ToArray());
        }
    }

    /// <summary><see cref="CoapMessageSerializer.DeserializeAsync(Stream, CancellationToken)"/> and <c>SerializeAsync(Stream)</c> over a <see cref="MemoryStream"/>.</summary>
    internal sealed class AsyncStream : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override async Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            using MemoryStream stream = new(input, writable: false);
            List<CoapMessage> messages = [];
            while (await serializer.DeserializeAsync(stream) is { } message)
            {
                messages.Add(message);
            }

            return messages;
        }

        public override async Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            using MemoryStream stream = new();
            await serializer.SerializeAsync(message, stream);
            return stream.ToArray();
        }
    }

    /// <summary>The asynchronous stream methods over a stream that returns one byte per read.</summary>
    internal sealed class AsyncOneByteStream : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override async Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            using OneByteStream stream = new(input);
            List<CoapMessage> messages = [];
            while (await serializer.DeserializeAsync(stream) is { } message)
            {
                messages.Add(message);
            }

            return messages;
        }

        public override async Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            using OneByteStream stream = new();
            await serializer.SerializeAsync(message, stream);
            return stream.Written;
        }
    }

    /// <summary>
    /// <see cref="CoapMessageSerializer.DeserializeAsync(PipeReader, CancellationToken)"/> with the whole input
    /// written in one write before the writer completes, and <c>SerializeAsync(PipeWriter)</c>.
    /// </summary>
    internal sealed class Pipe : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override async Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            System.IO.Pipelines.Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
            await pipe.Writer.WriteAsync(input);
            await pipe.Writer.CompleteAsync();
            List<CoapMessage> messages = [];
            while (await serializer.DeserializeAsync(pipe.Reader) is { } message)
            {
                messages.Add(message);
            }

            await pipe.Reader.CompleteAsync();
            return messages;
        }

        public override async Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            System.IO.Pipelines.Pipe pipe = new(new PipeOptions(pauseWriterThreshold: 0));
            await serializer.SerializeAsync(message, pipe.Writer);
            await pipe.Writer.CompleteAsync();
            return await ReadToEndAsync(pipe.Reader);
        }
    }

    /// <summary>
    /// <see cref="CoapMessageSerializer.DeserializeAsync(PipeReader, CancellationToken)"/> fed one byte per
    /// write and flush; with inline schedulers the reader runs after every byte, so it sees every prefix of the
    /// input. Writes go through <see cref="CoapMessageSerializer.Serialize(CoapMessage, IBufferWriter{byte})"/>
    /// into a writer that hands out small buffers.
    /// </summary>
    internal sealed class PipeOneByteWrites : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override async Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            System.IO.Pipelines.Pipe pipe = new(new PipeOptions(
                readerScheduler: PipeScheduler.Inline,
                writerScheduler: PipeScheduler.Inline,
                pauseWriterThreshold: 0,
                useSynchronizationContext: false));
            List<CoapMessage> messages = [];
            int framed = 0;
            ValueTask<CoapMessage?> pending = serializer.DeserializeAsync(pipe.Reader);
            for (int i = 0; i < input.Length; i++)
            {
                await pipe.Writer.WriteAsync(input.AsMemory(i, 1));

                // The reader ran inline during the flush: collect every message it completed.
                while (pending.IsCompleted)
                {
                    CoapMessage? message = await pending;
                    message.Should().NotBeNull("the pipe has not completed yet");
                    framed += serializer.GetSerializedLength(message!);
                    framed.Should().Be(i + 1, "a frame is read as soon as its last byte arrives, and not before");
                    messages.Add(message!);
                    pending = serializer.DeserializeAsync(pipe.Reader);
                }
            }

            await pipe.Writer.CompleteAsync();
            while (await pending is { } last)
            {
                messages.Add(last);
                pending = serializer.DeserializeAsync(pipe.Reader);
            }

            await pipe.Reader.CompleteAsync();
            return messages;
        }

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            ChunkedBufferWriter writer = new(chunkSize: 5);
            int written = serializer.Serialize(message, writer);
            written.Should().Be(writer.WrittenCount);
            return Task.FromResult(writer.ToArray());
        }
    }

    /// <summary>
    /// <see cref="CoapMessageSerializer.ReadFrame"/> over a sequence of 1-byte segments that grows one byte at a
    /// time, as a connection's read loop would call it: every incomplete prefix must answer NeedMoreData and
    /// consume nothing, and Done must consume exactly one frame. Datagrams are handed over whole. Writes go to
    /// an <see cref="ArrayBufferWriter{T}"/>.
    /// </summary>
    internal sealed class ReadFrameOneByteSegments : SerializerEntryPoint
    {
        public override bool ReadsConnection => true;

        public override Task<IReadOnlyList<CoapMessage>> ReadAsync(CoapMessageSerializer serializer, byte[] input)
        {
            List<CoapMessage> messages = [];
            ReadOnlySequence<byte> all = Segments.Split(input, 1, out SequencePosition[] ends);
            if (input.Length == 0)
            {
                return Task.FromResult<IReadOnlyList<CoapMessage>>(messages);
            }

            if (serializer.Framing == CoapFraming.Datagram)
            {
                messages.Add(ReadOne(serializer, all, expectComplete: true)!);
                return Task.FromResult<IReadOnlyList<CoapMessage>>(messages);
            }

            SequencePosition start = all.Start;
            foreach (SequencePosition end in ends)
            {
                ReadOnlySequence<byte> buffered = all.Slice(start, end);
                if (ReadOne(serializer, buffered, expectComplete: false) is { } message)
                {
                    messages.Add(message);
                    start = end;
                }
            }

            long left = all.Slice(start).Length;
            if (left > 0)
            {
                throw new CoapFormatException(new CoapFormatError(CoapFormatErrorReason.UnexpectedEndOfStream, left));
            }

            return Task.FromResult<IReadOnlyList<CoapMessage>>(messages);
        }

        public override Task<byte[]> WriteAsync(CoapMessageSerializer serializer, CoapMessage message)
        {
            ArrayBufferWriter<byte> writer = new(1);
            int written = serializer.Serialize(message, writer);
            written.Should().Be(writer.WrittenCount);
            return Task.FromResult(writer.WrittenSpan.ToArray());
        }

        private static CoapMessage? ReadOne(CoapMessageSerializer serializer, ReadOnlySequence<byte> buffered, bool expectComplete)
        {
            OperationStatus status = serializer.ReadFrame(buffered, out CoapMessage? message, out SequencePosition consumed, out CoapFormatError error);
            switch (status)
            {
                case OperationStatus.Done:
                    message.Should().NotBeNull();
                    error.Reason.Should().Be(CoapFormatErrorReason.None);
                    buffered.Slice(consumed).Length.Should().Be(0, "fed one byte at a time, a frame completes exactly at its last byte");
                    return message;
                case OperationStatus.NeedMoreData:
                    expectComplete.Should().BeFalse("a datagram is always complete");
                    message.Should().BeNull();
                    consumed.Should().Be(buffered.Start, "nothing is consumed on incomplete input");
                    return null;
                case OperationStatus.InvalidData:
                    message.Should().BeNull();
                    consumed.Should().Be(buffered.Start, "nothing is consumed on malformed input");
                    error.Reason.Should().NotBe(CoapFormatErrorReason.None);
                    throw new CoapFormatException(error);
                default:
                    throw new InvalidOperationException($"ReadFrame answered {status}.");
            }
        }
    }

    private static async Task<byte[]> ReadToEndAsync(PipeReader reader)
    {
        while (true)
        {
            ReadResult result = await reader.ReadAsync();
            if (result.IsCompleted)
            {
                byte[] bytes = result.Buffer.ToArray();
                reader.AdvanceTo(result.Buffer.End);
                await reader.CompleteAsync();
                return bytes;
            }

            reader.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        }
    }
}
