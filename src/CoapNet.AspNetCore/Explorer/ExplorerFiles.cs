using System.Collections.Frozen;
using System.Reflection;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace CoapNet.AspNetCore.Explorer;

/// <summary>
/// The explorer's files, embedded in this assembly (so `dotnet pack` ships them and a page needs no CDN), served with a
/// strong ETag and a Content-Security-Policy that lets them load nothing from elsewhere.
/// </summary>
internal static class ExplorerFiles
{
    /// <summary>The folder under the page's path that holds its script and style.</summary>
    public const string Folder = "coap-explorer";

    private const string ResourcePrefix = "CoapNet.AspNetCore.Explorer.";
    private const string Page = "index.html";

    // The page's own scripts, styles and WebSocket (connect-src ws: wss: too: its endpoint field may name another server,
    // whose Origin check then decides); no inline script, nothing framed.
    private const string Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private static readonly Lazy<FrozenDictionary<string, ExplorerFile>> Files = new(Load);

    /// <summary>Answers the page; a path without its trailing slash is redirected to it, so the page's relative links resolve under it.</summary>
    public static Task ServePageAsync(HttpContext http)
    {
        string requested = http.Request.PathBase + http.Request.Path;
        if (!requested.EndsWith('/'))
        {
            http.Response.Redirect(requested + "/" + http.Request.QueryString);
            return Task.CompletedTask;
        }

        return ServeAsync(http, Page);
    }

    /// <summary>Answers one of the page's files by name; 404 for any other.</summary>
    public static Task ServeFileAsync(HttpContext http)
    {
        string? name = http.Request.RouteValues["file"] as string;
        if (name is null || name == Page || !Files.Value.ContainsKey(name))
        {
            http.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        }

        return ServeAsync(http, name);
    }

    private static Task ServeAsync(HttpContext http, string name)
    {
        ExplorerFile file = Files.Value[name];
        IHeaderDictionary headers = http.Response.Headers;
        headers.ETag = file.ETag;
        // Revalidated on every load: a new version of the package serves new files at the same names.
        headers.CacheControl = "no-cache";
        headers.XContentTypeOptions = "nosniff";
        headers.ContentSecurityPolicy = Policy;
        if (http.Request.Headers.IfNoneMatch == file.ETag)
        {
            http.Response.StatusCode = StatusCodes.Status304NotModified;
            return Task.CompletedTask;
        }

        http.Response.ContentType = file.ContentType;
        http.Response.ContentLength = file.Content.Length;
        return HttpMethods.IsHead(http.Request.Method) ? Task.CompletedTask : http.Response.Body.WriteAsync(file.Content).AsTask();
    }

    private static FrozenDictionary<string, ExplorerFile> Load()
    {
        Assembly assembly = typeof(ExplorerFiles).Assembly;
        Dictionary<string, ExplorerFile> files = new(StringComparer.Ordinal);
        foreach (string resource in assembly.GetManifestResourceNames())
        {
            if (!resource.StartsWith(ResourcePrefix, StringComparison.Ordinal))
            {
                continue;
            }

            using Stream stream = assembly.GetManifestResourceStream(resource)!;
            byte[] content = new byte[stream.Length];
            stream.ReadExactly(content);
            string name = resource[ResourcePrefix.Length..];
            string etag = new EntityTagHeaderValue($"\"{Convert.ToHexString(SHA256.HashData(content).AsSpan(0, 8)).ToLowerInvariant()}\"").ToString();
            files[name] = new ExplorerFile(content, ContentType(name), etag);
        }

        return files.ToFrozenDictionary(StringComparer.Ordinal);
    }

    private static string ContentType(string name) => Path.GetExtension(name) switch
    {
        ".html" => "text/html; charset=utf-8",
        ".js" => "text/javascript; charset=utf-8",
        ".css" => "text/css; charset=utf-8",
        _ => "application/octet-stream",
    };

    private sealed record ExplorerFile(byte[] Content, string ContentType, string ETag);
}
