using System.Globalization;
using System.Text;
using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Cli;

/// <summary>
/// A folder's files as read-only CoAP resources: GET /a/b.json answers the file a/b.json with a Content-Format from
/// its extension, read block by block as the client asks for the blocks (RFC 7959), so a file of any size is served
/// without being held in memory; GET / and GET on a folder answer a listing of it. Never anything outside the folder:
/// a path with ".." or one that leads through a symbolic link out of it is answered 4.03 Forbidden.
/// </summary>
internal sealed class FolderResources
{
    // A listing is for reading on a terminal; past this many entries it says how many more there are.
    private const int MaxListed = 1000;

    private readonly string _root;

    /// <summary>Serves <paramref name="root"/>.</summary>
    /// <param name="root">The folder.</param>
    public FolderResources(string root)
    {
        _root = Path.TrimEndingDirectorySeparator(Path.GetFullPath(root));
    }

    /// <summary>
    /// Maps one GET route per file present now, so discovery lists each with its "ct", and a catch-all
    /// for files added later (and for the paths it must refuse).
    /// </summary>
    /// <param name="server">The server, not yet started.</param>
    /// <returns>The number of files listed in discovery.</returns>
    public int Map(CoapServer server)
    {
        int listed = 0;
        EnumerationOptions walk = new() { RecurseSubdirectories = true, IgnoreInaccessible = true, AttributesToSkip = 0 };
        foreach (string path in Directory.EnumerateFiles(_root, "*", walk))
        {
            string relative = Path.GetRelativePath(_root, path).Replace(Path.DirectorySeparatorChar, '/');

            // A name that is not a literal route segment ("{x}", an empty segment) is still served through the catch-all.
            if (relative.Contains('{', StringComparison.Ordinal) || relative.Contains('}', StringComparison.Ordinal) || Resolve(relative) is null)
            {
                continue;
            }

            server.MapGet("/" + relative, request => Serve(relative)).Produces(ContentFormats.ForFile(relative));
            listed++;
        }

        // The listing is for people trying "coap get coap://host/"; discovery lists the files themselves.
        server.MapGet("/", request => Serve(string.Empty)).HideFromDiscovery();
        server.MapGet("/{*path}", request => Serve(request.GetRouteValue("path") ?? string.Empty));
        return listed;
    }

    /// <summary>The answer for a path relative to the folder.</summary>
    /// <param name="relative">The request path without the leading '/'; empty for the folder itself.</param>
    /// <returns>2.05 with the file (its body a stream) or a folder's listing, 4.03 for a path out of the folder, 4.04 when there is no such file.</returns>
    internal CoapResponse Serve(string relative)
    {
        string? path = relative.Length == 0 ? _root : Resolve(relative);
        if (path is null)
        {
            return CoapResponse.Diagnostic(CoapCode.Forbidden, "outside the served folder");
        }

        if (Directory.Exists(path))
        {
            return Listing(path, relative);
        }

        FileInfo file = new(path);
        if (!file.Exists)
        {
            return new CoapResponse(CoapCode.NotFound);
        }

        try
        {
            // The block-wise stage reads the block each request asks for and closes the file when the transfer ends.
            FileStream body = new(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0, FileOptions.RandomAccess);
            CoapResponse response = CoapResponse.Content(body, ContentFormats.ForFile(path));

            // RFC 7959 section 2.4: the ETag tells a client that the file changed between two blocks; its length alone
            // (the stage's default) would miss an edit that keeps the size.
            response.Message.ETag = BitConverter.GetBytes(file.LastWriteTimeUtc.Ticks ^ (file.Length << 20));
            return response;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return CoapResponse.Diagnostic(CoapCode.InternalServerError, "the file cannot be read");
        }
    }

    /// <summary>A folder's entries as text, one a line: folders with a trailing '/', files with their size and format.</summary>
    private CoapResponse Listing(string folder, string relative)
    {
        StringBuilder text = new();
        text.Append("coap serve: /").Append(relative.Length == 0 ? string.Empty : relative.TrimEnd('/') + "/").Append('\n');
        int listed = 0, more = 0;
        try
        {
            EnumerationOptions walk = new() { IgnoreInaccessible = true, AttributesToSkip = FileAttributes.Hidden };
            foreach (FileSystemInfo entry in new DirectoryInfo(folder).EnumerateFileSystemInfos("*", walk))
            {
                string child = (relative.Length == 0 ? string.Empty : relative.TrimEnd('/') + "/") + entry.Name;
                if (Resolve(child) is null)
                {
                    // A link out of the folder is not served, so it is not listed either.
                    continue;
                }

                if (listed == MaxListed)
                {
                    more++;
                    continue;
                }

                listed++;
                text.Append('/').Append(child);
                if (entry is FileInfo file)
                {
                    text.Append("  ").Append(file.Length.ToString(CultureInfo.InvariantCulture)).Append(" bytes  ").Append(ContentFormats.Describe(ContentFormats.ForFile(file.Name)));
                }
                else
                {
                    text.Append('/');
                }

                text.Append('\n');
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return CoapResponse.Diagnostic(CoapCode.InternalServerError, "the folder cannot be listed");
        }

        if (listed == 0)
        {
            text.Append("(empty)\n");
        }

        if (more > 0)
        {
            text.Append("... and ").Append(more.ToString(CultureInfo.InvariantCulture)).Append(" more\n");
        }

        return CoapResponse.Content(text.ToString());
    }

    /// <summary>The full path of <paramref name="relative"/> inside the folder, or null when it would lead out of it.</summary>
    private string? Resolve(string relative)
    {
        // Uri-Path segments arrive decoded, so "..", "\" and NUL are checked here, not trusted to the URI layer.
        foreach (string segment in relative.Split('/'))
        {
            if (segment is "" or "." or ".." || segment.Contains('\\', StringComparison.Ordinal) || segment.Contains('\0', StringComparison.Ordinal))
            {
                return null;
            }
        }

        string full = Path.GetFullPath(Path.Combine(_root, relative));
        if (!IsInside(full))
        {
            return null;
        }

        // A symbolic link anywhere on the way may point out of the folder: follow each one and check where it ends.
        string current = _root;
        foreach (string segment in relative.Split('/'))
        {
            current = Path.Combine(current, segment);
            FileSystemInfo entry = Directory.Exists(current) ? new DirectoryInfo(current) : new FileInfo(current);
            if (entry.LinkTarget is not null && (entry.ResolveLinkTarget(returnFinalTarget: true) is not { } target || !IsInside(Path.GetFullPath(target.FullName))))
            {
                return null;
            }
        }

        return full;
    }

    private bool IsInside(string full)
        => full.Length > _root.Length && full.StartsWith(_root, StringComparison.Ordinal) && full[_root.Length] == Path.DirectorySeparatorChar;
}
