/// The languages, one a line.
pub async fn languages(ctx: &Ctx) -> Result<Content, Error> {
    Ok(Content::Text(ctx.languages()))
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::RESOURCES
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_RESOURCE_LANGUAGES: ::groundkit_core::__private::ResourceSpec = {
    #[allow(dead_code)]
    fn __groundkit_checks() {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_resource_return::<Result<Content, Error>>();
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::Content,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let _ = arguments;
            ::groundkit_core::__private::ResourceReturn::into_content(
                languages(context).await,
            )
        })
    }
    ::groundkit_core::__private::ResourceSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ResourceParts {
        name: "languages",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "The languages, one a line.",
        description: "The languages, one a line.",
        mime_type: "text/plain",
        uri: ::groundkit_core::__private::UriTemplate {
            template: "hello://languages",
            scheme: "hello",
            segments: &[::groundkit_core::__private::Segment::Literal("languages")],
        },
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Get,
            path: "/resources/hello/languages",
            params: &[],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        params_schema: ::groundkit_core::__private::no_params_schema,
        completers: &[],
        handler: __groundkit_handler,
    })
};
